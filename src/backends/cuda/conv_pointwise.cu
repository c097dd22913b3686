// The convolution epilogue y = act(y + bias[channel] + residual) in place, 16 bytes per load and store: what
// follows a pointwise (1x1) convolution's GEMM where cuBLASLt's epilogue cannot apply the activation (ReLU6 =
// clip, and every other non-ReLU one), or the bias of a row-major output.
#include "backends/cuda/activation.cuh"
#include "backends/cuda/conv_kernels.h"
#include "backends/cuda/device_types.cuh"

namespace kiln::cuda {
namespace {

using dev::fromFloat;
using dev::toFloat;

constexpr int kThreads = 256;
constexpr int kVecBytes = 16;

template <typename T>
struct alignas(kVecBytes) Vec {
  static constexpr int kWidth = kVecBytes / static_cast<int>(sizeof(T));
  T v[kWidth];
};

// One 16-byte vector of y per thread and grid-stride step. `perChannelVec`: the vector's elements are consecutive
// channels (channels-last: channel of element i is i % k, and k is a multiple of the width, so a vector never
// wraps); else they share one channel (row-major: (i / spatial) % k with spatial a multiple of the width).
// Every load of a step (y, residual, bias) is issued before any math. 32-bit index math (the launcher checks).
template <typename T>
__global__ void __launch_bounds__(kThreads)
    epilogueVecKernel(uint32_t k, uint32_t spatial, bool perChannelVec, Epilogue ep, T* y, uint32_t vectors) {
  constexpr int W = Vec<T>::kWidth;
  auto* yv = reinterpret_cast<Vec<T>*>(y);  // not restrict: the residual may share y's memory
  auto const* rv = static_cast<Vec<T> const*>(ep.residual);
  T const* bias = static_cast<T const*>(ep.bias);
  for (uint32_t v = blockIdx.x * blockDim.x + threadIdx.x; v < vectors; v += gridDim.x * blockDim.x) {
    uint32_t const i0 = v * W;
    Vec<T> x = yv[v];
    Vec<T> r{}, b{};
    if (rv) r = rv[v];
    if (bias) {
      if (perChannelVec) {
        b = *reinterpret_cast<Vec<T> const*>(bias + i0 % k);
      } else {
        T const one = bias[(i0 / spatial) % k];
#pragma unroll
        for (int j = 0; j < W; ++j) b.v[j] = one;
      }
    }
#pragma unroll
    for (int j = 0; j < W; ++j) {
      float acc = toFloat(x.v[j]);
      if (bias) acc += toFloat(b.v[j]);
      if (rv) acc += toFloat(r.v[j]);
      if (ep.activation >= 0) acc = dev::activate<float>(ep.activation, acc, ep.alpha, ep.beta);
      x.v[j] = fromFloat<T>(acc);
    }
    yv[v] = x;
  }
}

bool aligned(void const* p) { return (reinterpret_cast<uintptr_t>(p) % kVecBytes) == 0; }

}  // namespace

bool launchEpilogueVec(int32_t dtype, int64_t n, int64_t k, int64_t spatial, Epilogue const& ep, void* y,
                       cudaStream_t stream) {
  int width = dtype == dev::kFLOAT ? 4 : (dtype == dev::kHALF || dtype == dev::kBF16) ? 8 : 0;
  int64_t total = n * k * spatial;
  if (width == 0 || total <= 0 || total >= (int64_t{1} << 31) || k < 1 || spatial < 1) return false;
  // Channels-last is spatial == 1: a vector spans `width` channels, so k must hold whole vectors (and the bias
  // vectors are then 16-byte aligned). Row-major: a vector stays within one channel's plane.
  bool perChannelVec = spatial == 1;
  if (perChannelVec ? k % width != 0 : spatial % width != 0) return false;
  if (!aligned(y) || (ep.residual && !aligned(ep.residual)) || (perChannelVec && ep.bias && !aligned(ep.bias)))
    return false;
  int64_t vectors = total / width;
  return KILN_CUDA_DISPATCH_FLOAT(
      dtype, epilogueVecKernel<T><<<dev::blocksFor(vectors, kThreads), kThreads, 0, stream>>>(
                 static_cast<uint32_t>(k), static_cast<uint32_t>(spatial), perChannelVec, ep, static_cast<T*>(y),
                 static_cast<uint32_t>(vectors)));
}

}  // namespace kiln::cuda
