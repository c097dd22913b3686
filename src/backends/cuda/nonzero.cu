// NonZero kernels: blocks own fixed chunks of the input (kRounds rounds of kThreads consecutive elements); a count
// pass, a one-block scan of the block counts, then a write pass that ranks hits inside each round with warp
// ballots so the coordinates come out in row-major order.
#include "backends/cuda/device_types.cuh"
#include "backends/cuda/scan.cuh"
#include "backends/cuda/nonzero_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kRounds = 16;
constexpr int64_t kChunk = static_cast<int64_t>(kThreads) * kRounds;
constexpr int kScanThreads = 1024;

template <typename T>
__device__ __forceinline__ bool nonZero(T v) {
  return v != T(0);
}
template <>
__device__ __forceinline__ bool nonZero(bool v) {
  return v;
}
template <>
__device__ __forceinline__ bool nonZero(float v) {
  return v != 0.f;
}  // NaN: true, -0: false
template <>
__device__ __forceinline__ bool nonZero(__half v) {
  return dev::toFloat(v) != 0.f;
}
template <>
__device__ __forceinline__ bool nonZero(__nv_bfloat16 v) {
  return dev::toFloat(v) != 0.f;
}
template <>
__device__ __forceinline__ bool nonZero(__nv_fp8_e4m3 v) {
  return dev::toFloat(v) != 0.f;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) nonZeroCount(T const* __restrict__ x, int64_t n, int64_t* counts) {
  int64_t base = static_cast<int64_t>(blockIdx.x) * kChunk;
  int c = 0;
  for (int r = 0; r < kRounds; ++r) {
    int64_t i = base + r * kThreads + threadIdx.x;
    bool f = i < n && nonZero(x[i]);
    c += __syncthreads_count(f);
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = c;
}

template <typename T, typename O>
__global__ void __launch_bounds__(kThreads)
    nonZeroWrite(T const* __restrict__ x, int64_t n, NonZeroShape s, int64_t const* __restrict__ counts,
                 O* __restrict__ y, int64_t count) {
  __shared__ int warpCounts[kWarps];
  int64_t base = static_cast<int64_t>(blockIdx.x) * kChunk;
  int64_t pos = counts[blockIdx.x];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int r = 0; r < kRounds; ++r) {
    int64_t i = base + r * kThreads + threadIdx.x;
    bool f = i < n && nonZero(x[i]);
    unsigned ballot = __ballot_sync(0xffffffffu, f);
    if (lane == 0) warpCounts[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, total = 0;
#pragma unroll
    for (int w = 0; w < kWarps; ++w) {
      int c = warpCounts[w];
      if (w < warp) before += c;
      total += c;
    }
    if (f) {
      int64_t j = pos + before + __popc(ballot & ((1u << lane) - 1u));
      int64_t rest = i;
      for (int d = s.rank - 1; d >= 0; --d) {
        int64_t e = s.d[d];
        y[d * count + j] = static_cast<O>(rest % e);
        rest /= e;
      }
    }
    pos += total;
    __syncthreads();  // warpCounts is rewritten next round
  }
}

}  // namespace

int64_t nonZeroBlocks(int64_t n) { return (n + kChunk - 1) / kChunk; }

bool launchNonZeroCount(int32_t dtype, void const* x, int64_t n, int64_t* counts, cudaStream_t stream) {
  int64_t nb = nonZeroBlocks(n);
  bool ok = KILN_CUDA_DISPATCH(
      dtype, nonZeroCount<T><<<static_cast<unsigned>(nb), kThreads, 0, stream>>>(static_cast<T const*>(x), n, counts));
  if (!ok) return false;
  dev::exclusiveScanOneBlock<kScanThreads><<<1, kScanThreads, 0, stream>>>(counts, nb);
  return true;
}

bool launchNonZeroWrite(int32_t dtype, void const* x, int64_t n, NonZeroShape const& shape, int64_t const* counts,
                        void* y, bool out64, int64_t count, cudaStream_t stream) {
  unsigned nb = static_cast<unsigned>(nonZeroBlocks(n));
  return KILN_CUDA_DISPATCH(dtype, {
    if (out64)
      nonZeroWrite<T, int64_t>
          <<<nb, kThreads, 0, stream>>>(static_cast<T const*>(x), n, shape, counts, static_cast<int64_t*>(y), count);
    else
      nonZeroWrite<T, int32_t>
          <<<nb, kThreads, 0, stream>>>(static_cast<T const*>(x), n, shape, counts, static_cast<int32_t*>(y), count);
  });
}

}  // namespace kiln::cuda
