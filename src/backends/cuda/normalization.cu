// Normalization kernels: one block per normalized group (layer, instance or group norm), two passes over the
// group in fp32 (mean, then the sum of squared deviations) and a third that writes, scale and bias at their own
// (broadcast) strides.
#include <cmath>
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/normalization_kernels.h"
#include "backends/cuda/reduce_device.cuh"

namespace kiln::cuda {
namespace {

template <typename T>
__global__ void normKernel(T const* __restrict__ x, T* __restrict__ y, void const* __restrict__ scale,
                           int32_t scaleType, void const* __restrict__ bias, int32_t biasType, StridedSpace outer,
                           StridedSpace inner, float epsilon) {
  __shared__ float scratch[33];
  float const count = static_cast<float>(inner.count);
  for (int64_t o = blockIdx.x; o < outer.count; o += gridDim.x) {
    int64_t ob[3];
    red::decode<3>(outer, o, ob);
    T const* xg = x + ob[0];
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) sum += dev::toFloat(xg[red::offset0(inner, i)]);
    float mean = red::blockReduce(sum, red::SumOp{}, 0.f, scratch) / count;
    float sq = 0.f;
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      float d = dev::toFloat(xg[red::offset0(inner, i)]) - mean;
      sq += d * d;
    }
    float inv = 1.f / sqrtf(red::blockReduce(sq, red::SumOp{}, 0.f, scratch) / count + epsilon);
    for (int64_t i = threadIdx.x; i < inner.count; i += blockDim.x) {
      int64_t ib[3];
      red::decode<3>(inner, i, ib);
      float s = red::loadFloat(scale, scaleType, ob[1] + ib[1]);
      float b = red::loadFloat(bias, biasType, ob[2] + ib[2]);
      y[ob[0] + ib[0]] = dev::fromFloat<T>((dev::toFloat(xg[ib[0]]) - mean) * inv * s + b);
    }
  }
}

}  // namespace

bool launchNormalization(int32_t dtype, void const* x, void* y, void const* scale, int32_t scaleType, void const* bias,
                         int32_t biasType, StridedSpace const& outer, StridedSpace const& inner, float epsilon,
                         cudaStream_t stream) {
  int threads = inner.count >= 256 ? 256 : static_cast<int>((inner.count + 31) / 32 * 32);
  if (threads < 32) threads = 32;
  auto blocks = static_cast<unsigned>(outer.count < (1 << 20) ? outer.count : (1 << 20));
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, normKernel<T><<<blocks, threads, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(y), scale,
                                                           scaleType, bias, biasType, outer, inner, epsilon));
}

}  // namespace kiln::cuda
