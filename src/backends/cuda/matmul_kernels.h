// Launchers of the MatrixMultiply device kernels (matmul.cu, matmul_mma.cu): the tiled shared-memory GEMM with its
// fused bias/residual/activation epilogue, the tensor-core GEMM for fp16/bf16 with the same epilogue, and the bias +
// activation pass that follows a cuBLASLt GEMM (gemm_epilogue.cu's vectorized kernel for the common cases, a generic
// one for the rest). Plain C++ signatures.
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

/// Block tiles of the tensor-core GEMM (matmul_mma.cu): rows x columns of y x the depth of one pipeline stage.
enum class MatmulMmaTile { k32x32x64, k32x64x32, k32x64x64, k64x64x32 };
int64_t matmulMmaTileRows(MatmulMmaTile tile);
int64_t matmulMmaTileCols(MatmulMmaTile tile);

/// One tensor-core GEMM: y (m x n, row-major) = act(a (m x k, row-major) * b + bias + residual), b [k, n] row-major
/// or, with transB, [n, k]; fp16 or bf16 (dtype: a DataType code) with fp32 accumulation and one rounding at the end.
/// bias: n values along y's rows, or null; residual: y's shape, only read, or null; activation -1: none, else an
/// ActivationType value with TensorRT's alpha/beta.
struct MatmulMmaCall {
  int32_t dtype = 0;
  int64_t m = 0, n = 0, k = 0;
  bool transB = false;
  void const* a = nullptr;
  void const* b = nullptr;
  void* y = nullptr;
  void const* bias = nullptr;
  void const* residual = nullptr;
  int32_t activation = -1;
  float alpha = 0.f, beta = 0.f;
  MatmulMmaTile tile = MatmulMmaTile::k32x64x32;
};

/// Whether launchMatmulMma takes the call's shape: fp16 / bf16; m, n, k > 0 and below 2^31, k and n multiples of 8;
/// the row tiles within the grid's 65535.
bool matmulMmaShapeFits(MatmulMmaCall const& c);
/// matmulMmaShapeFits, and a and b 16-byte aligned, y, the bias and the residual 4-byte aligned.
bool matmulMmaFits(MatmulMmaCall const& c);

/// Enqueues the GEMM; false (nothing launched) where matmulMmaFits is false. Check launchStatus after.
bool launchMatmulMma(MatmulMmaCall const& c, cudaStream_t stream);

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
