// Device side of Fill (fill_kernels.h). Sums and products use __dadd_rn/__dmul_rn so that nvcc cannot contract
// them into fmas: linspace values then round exactly as the reference's host arithmetic does.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/fill_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int32_t kLinspace = 0, kUniform = 1;

__device__ __forceinline__ uint64_t splitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

__device__ __forceinline__ double draw(uint64_t key, uint64_t counter) {
  return static_cast<double>(splitMix64(key + counter) >> 11) * (1.0 / 9007199254740992.0);
}

// The reference's fromDouble: floats through float, integers truncated and saturated (NaN -> 0).
template <typename T>
__device__ __forceinline__ T storeDouble(double v) {
  if constexpr (std::is_same_v<T, float>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16> ||
                       std::is_same_v<T, __nv_fp8_e4m3>) {
    return dev::fromFloat<T>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else {
    if (isnan(v)) return T(0);
    double t = trunc(v);
    constexpr T lo = std::numeric_limits<T>::min();
    constexpr T hi = std::numeric_limits<T>::max();
    if (t <= static_cast<double>(lo)) return lo;
    if (t >= static_cast<double>(hi)) return hi;
    return static_cast<T>(t);
  }
}

template <typename T>
__device__ __forceinline__ T storeInt(int64_t v) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(v);
  else
    return storeDouble<T>(static_cast<double>(v));
}

template <typename T>
__global__ void fillKernel(T* __restrict__ y, FillPlan p, int64_t total) {
  for (int64_t lin = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; lin < total;
       lin += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (p.op == kLinspace) {
      int64_t idx[8];
      int64_t rem = lin;
      for (int32_t d = p.rank - 1; d >= 0; --d) {
        idx[d] = rem % p.dims[d];
        rem /= p.dims[d];
      }
      if (p.exact) {
        uint64_t v = static_cast<uint64_t>(p.alphaInt);
        for (int32_t d = 0; d < p.rank; ++d) v += static_cast<uint64_t>(idx[d]) * static_cast<uint64_t>(p.intSteps[d]);
        y[lin] = storeInt<T>(static_cast<int64_t>(v));
      } else {
        double v = p.alpha;
        for (int32_t d = 0; d < p.rank; ++d) v = __dadd_rn(v, __dmul_rn(static_cast<double>(idx[d]), p.steps[d]));
        y[lin] = storeDouble<T>(v);
      }
    } else if (p.op == kUniform) {
      double v = __dadd_rn(p.alpha, __dmul_rn(p.beta - p.alpha, draw(p.key, static_cast<uint64_t>(lin))));
      y[lin] = storeDouble<T>(v);
    } else {
      constexpr double kTwoPi = 6.283185307179586476925286766559;
      auto c = static_cast<uint64_t>(lin);
      double r = sqrt(__dmul_rn(-2.0, log(1.0 - draw(p.key, 2 * c))));
      double v = __dadd_rn(p.alpha, __dmul_rn(__dmul_rn(p.beta, r), cos(__dmul_rn(kTwoPi, draw(p.key, 2 * c + 1)))));
      y[lin] = storeDouble<T>(v);
    }
  }
}

}  // namespace

cudaError_t launchFill(void* y, int32_t dtype, FillPlan const& p, cudaStream_t stream) {
  int64_t total = 1;
  for (int32_t d = 0; d < p.rank; ++d) total *= p.dims[d];
  if (total <= 0) return cudaSuccess;
  unsigned blocks = dev::blocksFor(total);
  bool known = KILN_CUDA_DISPATCH(dtype, fillKernel<T><<<blocks, 256, 0, stream>>>(static_cast<T*>(y), p, total));
  return known ? cudaGetLastError() : cudaErrorInvalidValue;
}

}  // namespace kiln::cuda
