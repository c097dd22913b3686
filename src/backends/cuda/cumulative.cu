// Cumulative sum kernels: one thread per line along the axis (adjacent threads on adjacent inner positions, so
// the loads coalesce when the axis is not innermost), a sequential scan in the reference's order and precision.
#include <cstdint>
#include <type_traits>

#include "backends/cuda/cumulative_kernels.h"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

template <typename T>
__global__ void cumsumKernel(T const* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t n, int64_t inner,
                             bool exclusive, bool reverse) {
  // Floats sum in double (rounded once per stored element), integers in wrapping uint64: the reference's way.
  using A = std::conditional_t<std::is_integral_v<T>, uint64_t, double>;
  int64_t lines = outer * inner, step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t l = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; l < lines; l += step) {
    int64_t o = l / inner, in = l - o * inner;
    T const* xl = x + o * n * inner + in;
    T* yl = y + o * n * inner + in;
    A sum = 0;
    for (int64_t s = 0; s < n; ++s) {
      int64_t at = (reverse ? n - 1 - s : s) * inner;
      A v;
      if constexpr (std::is_integral_v<T>)
        v = static_cast<uint64_t>(static_cast<int64_t>(xl[at]));
      else
        v = static_cast<double>(dev::toFloat(xl[at]));
      if (!exclusive) sum += v;
      if constexpr (std::is_integral_v<T>)
        yl[at] = static_cast<T>(static_cast<int64_t>(sum));
      else
        yl[at] = dev::fromFloat<T>(static_cast<float>(sum));
      if (exclusive) sum += v;
    }
  }
}

template <typename T>
void launch(void const* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive, bool reverse,
            cudaStream_t stream) {
  cumsumKernel<T><<<dev::blocksFor(outer * inner, 128), 128, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(y),
                                                                          outer, n, inner, exclusive, reverse);
}

}  // namespace

bool launchCumulativeSum(int32_t dtype, void const* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
                         bool reverse, cudaStream_t stream) {
  switch (dtype) {
    case dev::kFLOAT:
      launch<float>(x, y, outer, n, inner, exclusive, reverse, stream);
      return true;
    case dev::kHALF:
      launch<__half>(x, y, outer, n, inner, exclusive, reverse, stream);
      return true;
    case dev::kBF16:
      launch<__nv_bfloat16>(x, y, outer, n, inner, exclusive, reverse, stream);
      return true;
    case dev::kINT32:
      launch<int32_t>(x, y, outer, n, inner, exclusive, reverse, stream);
      return true;
    case dev::kINT64:
      launch<int64_t>(x, y, outer, n, inner, exclusive, reverse, stream);
      return true;
    default:
      return false;
  }
}

}  // namespace kiln::cuda
