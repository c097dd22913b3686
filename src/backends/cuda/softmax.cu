// SoftMax kernels: a warp per row (rows up to 1024 elements, eight rows a block) or a block per row (longer rows)
// when the axis is innermost; one thread per column otherwise. fp32 math, max-subtracted; a NaN anywhere in a
// row, or an infinite maximum, makes the row NaN exactly as the reference's formula does.
#include <cmath>
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reduce_device.cuh"
#include "backends/cuda/softmax_kernels.h"

namespace kiln::cuda {
namespace {

constexpr int kRowsPerWarpBlock = 8;
constexpr int kBlockThreads = 256;

// The length of row r to normalize over (its bound when ragged), or -1 when the bound is out of range.
__device__ __forceinline__ int64_t rowLength(int32_t const* bounds, int64_t r, int64_t len) {
  if (!bounds) return len;
  int64_t b = bounds[r];
  return (b < 0 || b > len) ? -1 : b;
}

template <typename T>
__global__ void softmaxWarpKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t len,
                                  int32_t const* __restrict__ bounds) {
  int lane = threadIdx.x & 31;
  int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerWarpBlock + (threadIdx.x >> 5);
  if (r >= rows) return;  // whole warps leave together: the shuffles below stay full-warp
  T const* xr = x + r * len;
  T* yr = y + r * len;
  int64_t n = rowLength(bounds, r, len);
  if (n < 0) {
    for (int64_t i = lane; i < len; i += 32) yr[i] = dev::fromFloat<T>(NAN);
    return;
  }
  float mx = -INFINITY;
  for (int64_t i = lane; i < n; i += 32) mx = red::nanMax(mx, dev::toFloat(xr[i]));
  mx = red::warpReduce(mx, red::MaxOp{});
  float sum = 0.f;
  for (int64_t i = lane; i < n; i += 32) sum += expf(dev::toFloat(xr[i]) - mx);
  sum = red::warpReduce(sum, red::SumOp{});
  float inv = 1.f / sum;
  for (int64_t i = lane; i < len; i += 32)
    yr[i] = dev::fromFloat<T>(i < n ? expf(dev::toFloat(xr[i]) - mx) * inv : 0.f);
}

template <typename T>
__global__ void softmaxBlockKernel(T const* __restrict__ x, T* __restrict__ y, int64_t rows, int64_t len,
                                   int32_t const* __restrict__ bounds) {
  __shared__ float scratch[33];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T const* xr = x + r * len;
    T* yr = y + r * len;
    int64_t n = rowLength(bounds, r, len);
    if (n < 0) {
      for (int64_t i = threadIdx.x; i < len; i += blockDim.x) yr[i] = dev::fromFloat<T>(NAN);
      continue;  // uniform over the block
    }
    float mx = -INFINITY;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) mx = red::nanMax(mx, dev::toFloat(xr[i]));
    mx = red::blockReduce(mx, red::MaxOp{}, -INFINITY, scratch);
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += expf(dev::toFloat(xr[i]) - mx);
    sum = red::blockReduce(sum, red::SumOp{}, 0.f, scratch);
    float inv = 1.f / sum;
    for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
      yr[i] = dev::fromFloat<T>(i < n ? expf(dev::toFloat(xr[i]) - mx) * inv : 0.f);
  }
}

template <typename T>
__global__ void softmaxColumnKernel(T const* __restrict__ x, T* __restrict__ y, int64_t outer, int64_t len,
                                    int64_t inner) {
  int64_t cols = outer * inner, step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols; c += step) {
    int64_t o = c / inner, in = c - o * inner;
    T const* xc = x + o * len * inner + in;
    T* yc = y + o * len * inner + in;
    float mx = -INFINITY;
    for (int64_t i = 0; i < len; ++i) mx = red::nanMax(mx, dev::toFloat(xc[i * inner]));
    float sum = 0.f;
    for (int64_t i = 0; i < len; ++i) sum += expf(dev::toFloat(xc[i * inner]) - mx);
    float inv = 1.f / sum;
    for (int64_t i = 0; i < len; ++i) yc[i * inner] = dev::fromFloat<T>(expf(dev::toFloat(xc[i * inner]) - mx) * inv);
  }
}

template <typename T>
void launch(void const* xv, void* yv, int64_t outer, int64_t len, int64_t inner, int32_t const* bounds,
            cudaStream_t stream) {
  auto const* x = static_cast<T const*>(xv);
  auto* y = static_cast<T*>(yv);
  if (inner == 1) {
    if (len <= 1024) {
      auto blocks = static_cast<unsigned>((outer + kRowsPerWarpBlock - 1) / kRowsPerWarpBlock);
      softmaxWarpKernel<T><<<blocks, 32 * kRowsPerWarpBlock, 0, stream>>>(x, y, outer, len, bounds);
    } else {
      auto blocks = static_cast<unsigned>(outer < (1 << 20) ? outer : (1 << 20));
      softmaxBlockKernel<T><<<blocks, kBlockThreads, 0, stream>>>(x, y, outer, len, bounds);
    }
  } else {
    softmaxColumnKernel<T><<<dev::blocksFor(outer * inner), kBlockThreads, 0, stream>>>(x, y, outer, len, inner);
  }
}

}  // namespace

bool launchSoftmax(int32_t dtype, void const* x, void* y, int64_t outer, int64_t len, int64_t inner,
                   int32_t const* bounds, cudaStream_t stream) {
  return KILN_CUDA_DISPATCH_FLOAT(dtype, launch<T>(x, y, outer, len, inner, bounds, stream));
}

}  // namespace kiln::cuda
