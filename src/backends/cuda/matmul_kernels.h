// Launchers of the MatrixMultiply device kernels (matmul.cu): the tiled shared-memory GEMM with its fused
// bias/activation epilogue, and the bias + activation pass that follows a cuBLASLt GEMM. Plain C++ signatures.
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

/// What follows the product: y = act(y + bias[map(index of y)]). The bias has y's dtype; `dims` are y's dims
/// (size-1 dims dropped, compatible neighbours merged) and `biasStrides` the bias's element strides over them
/// (0 where it broadcasts). activation -1: none; else an ActivationType value with alpha/beta as TensorRT's.
struct MatmulEpilogue {
  void const* bias = nullptr;
  int32_t rank = 0;
  int64_t dims[kMatmulMaxDims] = {};
  int64_t biasStrides[kMatmulMaxDims] = {};
  int32_t activation = -1;
  double alpha = 0, beta = 0;
  bool active() const { return bias != nullptr || activation >= 0; }
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

/// Enqueues y = act(y + bias) in place over `count` > 0 elements of dtype `dtype`. Returns false for a dtype
/// it has no kernel for.
bool launchMatmulEpilogue(void* y, int32_t dtype, int64_t count, MatmulEpilogue const& ep, cudaStream_t stream);

}  // namespace kiln::cuda
