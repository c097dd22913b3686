// MatrixMultiply device kernels: a 64x64-tiled shared-memory GEMM over a broadcast batch with the bias, residual
// and activation fused into its epilogue, and the stand-alone bias + activation pass used after cuBLASLt GEMMs
// (gemm_epilogue.cu's vectorized kernel where it applies, a generic one here for the rest).
#include "backends/cuda/activation.cuh"
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/gemm_epilogue_kernels.h"
#include "backends/cuda/matmul_kernels.h"

namespace kiln::cuda {
namespace {

using dev::activate;

// Storage <-> accumulation type.
template <typename A, typename T>
__device__ __forceinline__ A toAcc(T v) {
  return static_cast<A>(dev::toFloat(v));
}
template <>
__device__ __forceinline__ double toAcc<double, double>(double v) {
  return v;
}
template <typename T, typename A>
__device__ __forceinline__ T fromAcc(A v) {
  return dev::fromFloat<T>(static_cast<float>(v));
}
template <>
__device__ __forceinline__ double fromAcc<double, double>(double v) {
  return v;
}

// Bias element for the output's linear index i.
__device__ __forceinline__ int64_t biasOffset(MatmulEpilogue const& ep, int64_t i) {
  int64_t off = 0;
  for (int32_t d = ep.rank - 1; d >= 0; --d) {
    int64_t c = i % ep.dims[d];
    i /= ep.dims[d];
    off += c * ep.biasStrides[d];
  }
  return off;
}

// biasOffset for an output of fewer than 2^31 elements (32-bit divisions).
__device__ __forceinline__ int64_t biasOffset32(MatmulEpilogue const& ep, uint32_t i) {
  uint32_t off = 0;
  for (int32_t d = ep.rank - 1; d >= 0; --d) {
    auto e = static_cast<uint32_t>(ep.dims[d]);
    uint32_t q = i / e;
    off += (i - q * e) * static_cast<uint32_t>(ep.biasStrides[d]);
    i = q;
  }
  return off;
}

constexpr int kEpilogueUnroll = 4;
// kEpilogueUnroll elements per thread from 2^20 elements on; one per thread below (more blocks for small,
// latency-bound outputs; the kernel's grid-stride loop takes either).
inline unsigned epilogueBlocks(int64_t count) {
  return dev::blocksFor(count < (int64_t{1} << 20) ? count : (count + kEpilogueUnroll - 1) / kEpilogueUnroll);
}

template <typename T, typename A>
__device__ __forceinline__ T finish(A v, int64_t yIndex, MatmulEpilogue const& ep) {
  if (ep.bias) v += toAcc<A>(static_cast<T const*>(ep.bias)[biasOffset(ep, yIndex)]);
  if (ep.residual) v += toAcc<A>(static_cast<T const*>(ep.residual)[yIndex]);
  if (ep.activation >= 0) v = activate<A>(ep.activation, v, static_cast<A>(ep.alpha), static_cast<A>(ep.beta));
  return fromAcc<T>(v);
}

constexpr int kTile = 64;     // output rows and columns per block
constexpr int kTileK = 16;    // depth of one shared-memory stage
constexpr int kThreads = 16;  // threads per block side: each thread owns a 4x4 strided sub-tile
constexpr int kPer = kTile / kThreads;

template <typename T, typename A>
__global__ void __launch_bounds__(kThreads* kThreads)
    matmulSimtKernel(T const* __restrict__ a, T const* __restrict__ b, T* __restrict__ y, MatmulProblem p,
                     MatmulBatch batch, int64_t batchCount, MatmulEpilogue ep) {
  __shared__ A as[kTileK][kTile + 1];
  __shared__ A bs[kTileK][kTile + 1];
  int const tx = threadIdx.x, ty = threadIdx.y, tid = ty * kThreads + tx;
  int64_t const tilesM = (p.m + kTile - 1) / kTile;
  // Loads walk the contiguous direction of each operand so that neighbouring threads read neighbouring words.
  bool const aAlongK = p.aCol == 1, bAlongN = p.bCol == 1;
  for (int64_t bi = blockIdx.z; bi < batchCount; bi += gridDim.z) {
    int64_t offA = 0, offB = 0, rem = bi;
    for (int32_t d = batch.rank - 1; d >= 0; --d) {
      int64_t c = rem % batch.dims[d];
      rem /= batch.dims[d];
      offA += c * batch.strideA[d];
      offB += c * batch.strideB[d];
    }
    T const* pa = a + offA;
    T const* pb = b + offB;
    int64_t const col0 = static_cast<int64_t>(blockIdx.x) * kTile;
    for (int64_t tm = blockIdx.y; tm < tilesM; tm += gridDim.y) {
      int64_t const row0 = tm * kTile;
      A acc[kPer][kPer];
#pragma unroll
      for (int r = 0; r < kPer; ++r)
#pragma unroll
        for (int c = 0; c < kPer; ++c) acc[r][c] = A(0);
      for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
#pragma unroll
        for (int q = 0; q < kTile * kTileK / (kThreads * kThreads); ++q) {
          int l = tid + q * kThreads * kThreads;
          int row = aAlongK ? l / kTileK : l % kTile;
          int kk = aAlongK ? l % kTileK : l / kTile;
          int64_t gi = row0 + row, gk = k0 + kk;
          as[kk][row] = gi < p.m && gk < p.k ? toAcc<A>(pa[gi * p.aRow + gk * p.aCol]) : A(0);
          int col = bAlongN ? l % kTile : l / kTileK;
          int kb = bAlongN ? l / kTile : l % kTileK;
          int64_t gj = col0 + col, gkb = k0 + kb;
          bs[kb][col] = gj < p.n && gkb < p.k ? toAcc<A>(pb[gkb * p.bRow + gj * p.bCol]) : A(0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < kTileK; ++kk) {
          A av[kPer], bv[kPer];
#pragma unroll
          for (int r = 0; r < kPer; ++r) av[r] = as[kk][ty + r * kThreads];
#pragma unroll
          for (int c = 0; c < kPer; ++c) bv[c] = bs[kk][tx + c * kThreads];
#pragma unroll
          for (int r = 0; r < kPer; ++r)
#pragma unroll
            for (int c = 0; c < kPer; ++c) acc[r][c] += av[r] * bv[c];
        }
        __syncthreads();
      }
#pragma unroll
      for (int r = 0; r < kPer; ++r) {
        int64_t i = row0 + ty + r * kThreads;
        if (i >= p.m) continue;
#pragma unroll
        for (int c = 0; c < kPer; ++c) {
          int64_t j = col0 + tx + c * kThreads;
          if (j >= p.n) continue;
          int64_t yi = (bi * p.m + i) * p.n + j;
          bool const fused = ep.bias != nullptr || ep.residual != nullptr || ep.activation >= 0;
          y[yi] = fused ? finish<T, A>(acc[r][c], yi, ep) : fromAcc<T>(acc[r][c]);
        }
      }
    }
  }
}

template <typename T, typename A>
__global__ void epilogueKernel(T* __restrict__ y, int64_t count, MatmulEpilogue ep) {
  // kEpilogueUnroll elements per thread and step, all loaded (with their bias) before any is computed: one
  // 2-byte element per thread leaves too few bytes in flight to keep HBM busy.
  int64_t const s = static_cast<int64_t>(gridDim.x) * blockDim.x;
  bool const small = count < (int64_t{1} << 31);
  T const* bias = static_cast<T const*>(ep.bias);
  T const* residual = static_cast<T const*>(ep.residual);
  for (int64_t i0 = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i0 < count;
       i0 += s * kEpilogueUnroll) {
    T v[kEpilogueUnroll], bv[kEpilogueUnroll], rv[kEpilogueUnroll];
#pragma unroll
    for (int u = 0; u < kEpilogueUnroll; ++u) {
      int64_t i = i0 + u * s;
      if (i >= count) continue;
      v[u] = y[i];
      if (bias) bv[u] = bias[small ? biasOffset32(ep, static_cast<uint32_t>(i)) : biasOffset(ep, i)];
      if (residual) rv[u] = residual[i];
    }
#pragma unroll
    for (int u = 0; u < kEpilogueUnroll; ++u) {
      int64_t i = i0 + u * s;
      if (i >= count) continue;
      A x = toAcc<A>(v[u]);
      if (bias) x += toAcc<A>(bv[u]);
      if (residual) x += toAcc<A>(rv[u]);
      if (ep.activation >= 0) x = activate<A>(ep.activation, x, static_cast<A>(ep.alpha), static_cast<A>(ep.beta));
      y[i] = fromAcc<T>(x);
    }
  }
}

// The bias's period along y when it repeats along the last dim (or covers y whole), in elements; 0 otherwise.
int64_t biasPeriod(MatmulEpilogue const& ep) {
  if (ep.rank < 1 || ep.biasStrides[ep.rank - 1] != 1) return 0;
  for (int32_t d = 0; d + 1 < ep.rank; ++d)
    if (ep.biasStrides[d] != 0) return 0;
  return ep.dims[ep.rank - 1];
}

// The vectorized pass for ep (matmulEpiloguePath has checked that it applies): the bias along y's last dim.
GemmEpilogue vectorPass(MatmulEpilogue const& ep) {
  GemmEpilogue e;
  e.bias = ep.bias;
  e.biasPeriod = ep.bias ? biasPeriod(ep) : 0;
  e.biasRow = 1;
  e.activation = ep.activation;
  e.alpha = static_cast<float>(ep.alpha);
  e.beta = static_cast<float>(ep.beta);
  e.vectorsPerThread = 4;
  return e;
}

// Calls body with T (storage) and A (accumulation) bound for the float types this family computes in.
#define KILN_MATMUL_DISPATCH(DT, ...) \
  [&]() -> bool {                     \
    switch (DT) {                     \
      case dev::kFLOAT: {             \
        using T = float;              \
        using A = float;              \
        __VA_ARGS__;                  \
        return true;                  \
      }                               \
      case dev::kHALF: {              \
        using T = __half;             \
        using A = float;              \
        __VA_ARGS__;                  \
        return true;                  \
      }                               \
      case dev::kBF16: {              \
        using T = __nv_bfloat16;      \
        using A = float;              \
        __VA_ARGS__;                  \
        return true;                  \
      }                               \
      case kMatmulFloat64: {          \
        using T = double;             \
        using A = double;             \
        __VA_ARGS__;                  \
        return true;                  \
      }                               \
      default:                        \
        return false;                 \
    }                                 \
  }()

}  // namespace

bool launchMatmulSimt(void const* a, void const* b, void* y, MatmulProblem const& p, MatmulBatch const& batch,
                      int64_t batchCount, MatmulEpilogue const& ep, cudaStream_t stream) {
  int64_t tilesN = (p.n + kTile - 1) / kTile, tilesM = (p.m + kTile - 1) / kTile;
  // Columns go on grid.x (2^31 - 1 blocks); rows and batches loop inside the kernel past 65535 blocks.
  dim3 grid(static_cast<unsigned>(tilesN), static_cast<unsigned>(tilesM < 65535 ? tilesM : 65535),
            static_cast<unsigned>(batchCount < 65535 ? batchCount : 65535));
  dim3 block(kThreads, kThreads);
  return KILN_MATMUL_DISPATCH(
      p.dtype, matmulSimtKernel<T, A><<<grid, block, 0, stream>>>(static_cast<T const*>(a), static_cast<T const*>(b),
                                                                  static_cast<T*>(y), p, batch, batchCount, ep));
}

MatmulEpiloguePath matmulEpiloguePath(void const* y, int32_t dtype, MatmulEpilogue const& ep) {
  if (ep.residual || !gemmEpilogueCompiled(ep.activation, false)) return MatmulEpiloguePath::kGeneric;
  return gemmEpilogueFits(y, dtype, vectorPass(ep)) ? MatmulEpiloguePath::kVector : MatmulEpiloguePath::kGeneric;
}

bool launchMatmulEpilogue(void* y, int32_t dtype, int64_t count, MatmulEpilogue const& ep, cudaStream_t stream) {
  if (matmulEpiloguePath(y, dtype, ep) == MatmulEpiloguePath::kVector)
    return launchGemmEpilogue(y, dtype, count, vectorPass(ep), stream);
  return KILN_MATMUL_DISPATCH(
      dtype, epilogueKernel<T, A><<<epilogueBlocks(count), 256, 0, stream>>>(static_cast<T*>(y), count, ep));
}

}  // namespace kiln::cuda
