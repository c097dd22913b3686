// TopK kernels: each element of a line counts how many elements of its line come before it in the stable order
// (value, then index), through tiles in shared memory; an element whose rank is below k writes itself at that
// rank. Exact for any n and k (O(n^2) comparisons per line: fine for the usual n, slow for very long lines).
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/topk_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kTile = 256;

template <typename T>
struct KeyOf {
  using K = float;
};
template <>
struct KeyOf<int32_t> {
  using K = int64_t;
};
template <>
struct KeyOf<int64_t> {
  using K = int64_t;
};

template <typename T>
__device__ __forceinline__ typename KeyOf<T>::K keyOf(T v) {
  if constexpr (std::is_same_v<typename KeyOf<T>::K, float>)
    return dev::toFloat(v);
  else
    return static_cast<int64_t>(v);
}

// -1, 0, 1 as the reference's compareValues: NaN above everything and equal to another NaN.
__device__ __forceinline__ int compareKeys(float a, float b) {
  bool na = isnan(a), nb = isnan(b);
  if (na || nb) return na == nb ? 0 : (na ? 1 : -1);
  return a < b ? -1 : (a > b ? 1 : 0);
}
__device__ __forceinline__ int compareKeys(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

template <typename T>
__global__ void topkRankKernel(T const* __restrict__ x, T* __restrict__ values, void* __restrict__ indices,
                               bool indices64, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest) {
  using K = typename KeyOf<T>::K;
  __shared__ K tile[kTile];
  int64_t rows = outer * inner;
  int64_t j = static_cast<int64_t>(blockIdx.x) * kTile + threadIdx.x;
  for (int64_t row = blockIdx.y; row < rows; row += gridDim.y) {
    int64_t o = row / inner, in = row - o * inner;
    T const* line = x + o * n * inner + in;
    K mine = j < n ? keyOf(line[j * inner]) : K{};
    int64_t rank = 0;
    for (int64_t t = 0; t < n; t += kTile) {
      __syncthreads();  // the previous tile (or row) is no longer read
      if (t + threadIdx.x < n) tile[threadIdx.x] = keyOf(line[(t + threadIdx.x) * inner]);
      __syncthreads();
      int64_t m = n - t < kTile ? n - t : kTile;
      if (j < n) {
        for (int64_t q = 0; q < m; ++q) {
          int c = compareKeys(tile[q], mine);
          bool before = (largest ? c > 0 : c < 0) || (c == 0 && t + q < j);
          rank += before ? 1 : 0;
        }
      }
    }
    if (j < n && rank < k) {
      int64_t dst = (o * k + rank) * inner + in;
      values[dst] = line[j * inner];
      if (indices64)
        static_cast<int64_t*>(indices)[dst] = j;
      else
        static_cast<int32_t*>(indices)[dst] = static_cast<int32_t>(j);
    }
  }
}

template <typename T>
void launch(void const* x, void* values, void* indices, bool indices64, int64_t outer, int64_t n, int64_t inner,
            int64_t k, bool largest, cudaStream_t stream) {
  int64_t rows = outer * inner;
  dim3 grid(static_cast<unsigned>((n + kTile - 1) / kTile), static_cast<unsigned>(rows < 65535 ? rows : 65535));
  topkRankKernel<T><<<grid, kTile, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(values), indices, indices64,
                                                outer, n, inner, k, largest);
}

}  // namespace

bool launchTopK(int32_t dtype, void const* x, void* values, void* indices, bool indices64, int64_t outer, int64_t n,
                int64_t inner, int64_t k, bool largest, cudaStream_t stream) {
  switch (dtype) {
    case dev::kFLOAT:
      launch<float>(x, values, indices, indices64, outer, n, inner, k, largest, stream);
      return true;
    case dev::kHALF:
      launch<__half>(x, values, indices, indices64, outer, n, inner, k, largest, stream);
      return true;
    case dev::kBF16:
      launch<__nv_bfloat16>(x, values, indices, indices64, outer, n, inner, k, largest, stream);
      return true;
    case dev::kINT32:
      launch<int32_t>(x, values, indices, indices64, outer, n, inner, k, largest, stream);
      return true;
    case dev::kINT64:
      launch<int64_t>(x, values, indices, indices64, outer, n, inner, k, largest, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::cuda
