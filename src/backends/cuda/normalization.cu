// Normalization kernels: one block per normalized group (layer, instance or group norm), two passes over the
// group in fp32 (mean, then the sum of squared deviations) and a third that writes, scale and bias at their own
// (broadcast) strides; and one warp per row for layer norm over 1,024 or more contiguous rows of up to 1,024
// elements.
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

// The common transformer case: each group is one contiguous row of L <= 32 * kPer elements, and scale and bias
// are the same contiguous row for every group. One warp per row holds the row in registers (element lane + 32 k
// in slot k, so each load is coalesced), and both sums are warp shuffles: no shared memory, no block barrier,
// every element read from memory once. The math is the generic kernel's: mean, then the mean squared
// deviation, in fp32.
constexpr int kRowWarps = 4;

template <typename T, int kPer>
__global__ void __launch_bounds__(32 * kRowWarps)
    rowNormKernel(T const* __restrict__ x, T* __restrict__ y, void const* __restrict__ scale, int32_t scaleType,
                  void const* __restrict__ bias, int32_t biasType, StridedSpace outer, int32_t len, float epsilon) {
  int const lane = threadIdx.x & 31;
  int64_t const warps = static_cast<int64_t>(gridDim.x) * kRowWarps;
  float const count = static_cast<float>(len);
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * kRowWarps + (threadIdx.x >> 5); o < outer.count; o += warps) {
    int64_t const base = red::offset0(outer, o);
    float v[kPer];
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      v[k] = j < len ? dev::toFloat(x[base + j]) : 0.f;
      sum += v[k];
    }
    float const mean = red::warpReduce(sum, red::SumOp{}) / count;
    float sq = 0.f;
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      float d = j < len ? v[k] - mean : 0.f;
      sq += d * d;
    }
    float const inv = 1.f / sqrtf(red::warpReduce(sq, red::SumOp{}) / count + epsilon);
#pragma unroll
    for (int k = 0; k < kPer; ++k) {
      int j = lane + 32 * k;
      if (j < len)
        y[base + j] =
            dev::fromFloat<T>((v[k] - mean) * inv * red::loadFloat(scale, scaleType, j) + red::loadFloat(bias, biasType, j));
    }
  }
}

// Fewer rows than kRowKernelFrom go to the block-per-group kernel, which spreads a small batch over more SMs.
constexpr int64_t kRowKernelFrom = 1024;

// Whether (outer, inner) is the row case rowNormKernel handles: at least kRowKernelFrom groups, each one contiguous
// run in x, scale and bias; scale and bias not moving with the group.

bool isRowCase(StridedSpace const& outer, StridedSpace const& inner) {
  if (inner.rank != 1 || inner.count > 32 * 32 || inner.count < 1 || outer.count < kRowKernelFrom) return false;
  for (int t = 0; t < 3; ++t)
    if (inner.stride[t][0] != 1) return false;
  for (int d = 0; d < outer.rank; ++d)
    if (outer.stride[1][d] != 0 || outer.stride[2][d] != 0) return false;
  return true;
}

template <typename T>
void launchRows(T const* x, T* y, void const* scale, int32_t scaleType, void const* bias, int32_t biasType,
                StridedSpace const& outer, int32_t len, float epsilon, cudaStream_t stream) {
  int64_t blocks64 = (outer.count + kRowWarps - 1) / kRowWarps;
  auto blocks = static_cast<unsigned>(blocks64 < (1 << 20) ? blocks64 : (1 << 20));
  dim3 block(32 * kRowWarps);
  if (len <= 32 * 4)
    rowNormKernel<T, 4><<<blocks, block, 0, stream>>>(x, y, scale, scaleType, bias, biasType, outer, len, epsilon);
  else if (len <= 32 * 8)
    rowNormKernel<T, 8><<<blocks, block, 0, stream>>>(x, y, scale, scaleType, bias, biasType, outer, len, epsilon);
  else if (len <= 32 * 16)
    rowNormKernel<T, 16><<<blocks, block, 0, stream>>>(x, y, scale, scaleType, bias, biasType, outer, len, epsilon);
  else
    rowNormKernel<T, 32><<<blocks, block, 0, stream>>>(x, y, scale, scaleType, bias, biasType, outer, len, epsilon);
}

}  // namespace

bool launchNormalization(int32_t dtype, void const* x, void* y, void const* scale, int32_t scaleType, void const* bias,
                         int32_t biasType, StridedSpace const& outer, StridedSpace const& inner, float epsilon,
                         cudaStream_t stream) {
  if (isRowCase(outer, inner))
    return KILN_CUDA_DISPATCH_FLOAT(dtype, launchRows<T>(static_cast<T const*>(x), static_cast<T*>(y), scale, scaleType,
                                                         bias, biasType, outer, static_cast<int32_t>(inner.count),
                                                         epsilon, stream));
  int threads = inner.count >= 256 ? 256 : static_cast<int>((inner.count + 31) / 32 * 32);
  if (threads < 32) threads = 32;
  auto blocks = static_cast<unsigned>(outer.count < (1 << 20) ? outer.count : (1 << 20));
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, normKernel<T><<<blocks, threads, 0, stream>>>(static_cast<T const*>(x), static_cast<T*>(y), scale,
                                                           scaleType, bias, biasType, outer, inner, epsilon));
}

}  // namespace kiln::cuda
