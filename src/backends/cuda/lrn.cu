// LRN kernel: one thread per element, summing the squares of its channel window (adjacent threads on adjacent
// spatial positions, so the loads coalesce).
#include <cmath>
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/lrn_kernels.h"
#include "backends/cuda/reduce_device.cuh"

namespace kiln::cuda {
namespace {

template <typename T>
__global__ void lrnKernel(T const* __restrict__ x, T* __restrict__ y, int64_t total, int64_t c, int64_t inner,
                          int64_t half, float alphaOverWindow, float beta, float k) {
  int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    int64_t ci = (i / inner) % c;
    int64_t base = i - ci * inner;  // channel 0 of this batch and position
    int64_t lo = ci - half < 0 ? 0 : ci - half, hi = ci + half > c - 1 ? c - 1 : ci + half;
    float sum = 0.f;
    for (int64_t j = lo; j <= hi; ++j) {
      float v = dev::toFloat(x[base + j * inner]);
      sum += v * v;
    }
    y[i] = dev::fromFloat<T>(dev::toFloat(x[i]) / powf(k + alphaOverWindow * sum, beta));
  }
}

}  // namespace

bool launchLrn(int32_t dtype, void const* x, void* y, int64_t n, int64_t c, int64_t inner, int64_t window, float alpha,
               float beta, float k, cudaStream_t stream) {
  int64_t total = n * c * inner;
  float aw = alpha / static_cast<float>(window);
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, lrnKernel<T><<<dev::blocksFor(total), 256, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(y),
                                                                     total, c, inner, window / 2, aw, beta, k));
}

}  // namespace kiln::cuda
