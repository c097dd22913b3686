// Launchers of the MatrixMultiply device kernels (matmul.cu): the tiled shared-memory GEMM with its fused
// bias/residual/activation epilogue, and the bias + activation pass that follows a cuBLASLt GEMM (gemm_epilogue.cu's
// vectorized kernel for the common cases, a generic one for the rest). Plain C++ signatures.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// DataType::kFLOAT64's code (device_types.cuh's DType has no fp64: only this family computes in it).
constexpr int32_t kMatmulFloat64 = 100;
constexpr int kMatmulMaxDims = 8;

/// Batch of a GEMM: the (collapsed) batch dims, row-major, with each operand's stride in elements (0 where the
/// operand broadcasts). Output matrices are contiguous: batch b starts at b * m * n.
struct MatmulBatch {
  int32_t rank = 0;
  int64_t dims[kMatmulMaxDims] = {};
  int64_t strideA[kMatmulMaxDims] = {};
  int64_t strideB[kMatmulMaxDims] = {};
};

/// What follows the product: y = act(y + bias[map(index of y)] + residual[index of y]). The bias and the
/// residual have y's dtype; `dims` are y's dims (size-1 dims dropped, compatible neighbours merged) and
/// `biasStrides` the bias's element strides over them (0 where it broadcasts). The residual is laid out as y
/// (contiguous, same shape) and is only read. activation -1: none; else an ActivationType value with alpha/beta
/// as TensorRT's.
struct MatmulEpilogue {
  void const* bias = nullptr;
  void const* residual = nullptr;
  int32_t rank = 0;
  int64_t dims[kMatmulMaxDims] = {};
  int64_t biasStrides[kMatmulMaxDims] = {};
  int32_t activation = -1;
  double alpha = 0, beta = 0;
  bool active() const { return bias != nullptr || residual != nullptr || activation >= 0; }
};

/// One GEMM problem: y[b] (m x n, row-major) = op(a[b]) (m x k) * op(b[b]) (k x n). Element (i, t) of a is at
/// a[i * aRow + t * aCol]; element (t, j) of b at b[t * bRow + j * bCol].
struct MatmulProblem {
  int32_t dtype = 0;  // DataType code of a, b, y and the bias
  int64_t m = 0, n = 0, k = 0;
  int64_t aRow = 0, aCol = 0, bRow = 0, bCol = 0;
};

/// Enqueues the tiled GEMM (fp32 accumulation for fp32/fp16/bf16, fp64 for fp64) with the epilogue fused.
/// Returns false for a dtype it has no kernel for. m, n > 0 (k may be 0). Check launchStatus after.
bool launchMatmulSimt(void const* a, void const* b, void* y, MatmulProblem const& p, MatmulBatch const& batch,
                      int64_t batchCount, MatmulEpilogue const& ep, cudaStream_t stream);

/// Which kernel launchMatmulEpilogue runs for a call.
enum class MatmulEpiloguePath {
  kVector,   ///< launchGemmEpilogue: 16-byte loads and stores, the activation compiled in; no bias or one along
             ///< y's last dim
  kGeneric,  ///< one element at a time, any bias map, residual and activation
};

/// The kernel launchMatmulEpilogue would run: kVector for fp32/fp16/bf16 with no residual, an activation among
/// none, ReLU, sigmoid, tanh, leaky ReLU, clip, GELU (erf and tanh), y 16-byte aligned, and no bias or a bias
/// that repeats along y's last dim (or covers y whole) with a length in whole 16-byte vectors and a 16-byte
/// aligned address; kGeneric otherwise.
MatmulEpiloguePath matmulEpiloguePath(void const* y, int32_t dtype, MatmulEpilogue const& ep);

/// Enqueues y = act(y + bias + residual) in place over `count` > 0 elements of dtype `dtype`. Returns false
/// for a dtype it has no kernel for.
bool launchMatmulEpilogue(void* y, int32_t dtype, int64_t count, MatmulEpilogue const& ep, cudaStream_t stream);

}  // namespace kiln::cuda
