// CUDA kernel of the normalization built-ins (InstanceNormalization_TRT, GroupNormalizationPlugin,
// CustomSkipLayerNormPluginDynamic): one block per segment, mean then variance by block reductions, then the
// per-channel affine and optional leaky ReLU.
#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

__device__ float blockSum(float v, float* shared) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFU, v, o);
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  int warps = (blockDim.x + 31) >> 5;
  v = threadIdx.x < warps ? shared[threadIdx.x] : 0.f;
  if (warp == 0) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFU, v, o);
    if (lane == 0) shared[0] = v;
  }
  __syncthreads();
  float r = shared[0];
  __syncthreads();
  return r;
}

template <typename T, typename A>
__global__ void segmentNormKernel(T const* in, T const* skip, float const* preBias, A const* gamma, A const* beta,
                                  T* out, int64_t segments, int64_t length, int64_t inner, int64_t channels,
                                  float eps, bool relu, float alpha) {
  __shared__ float shared[32];
  for (int64_t s = blockIdx.x; s < segments; s += gridDim.x) {
    int64_t base = s * length;
    auto value = [&](int64_t i) {
      float x = loadF(in, base + i);
      if (skip) x += loadF(skip, base + i);
      if (preBias) x += preBias[i];
      return x;
    };
    float sum = 0.f;
    for (int64_t i = threadIdx.x; i < length; i += blockDim.x) sum += value(i);
    float mean = blockSum(sum, shared) / static_cast<float>(length);
    float sq = 0.f;
    for (int64_t i = threadIdx.x; i < length; i += blockDim.x) {
      float d = value(i) - mean;
      sq += d * d;
    }
    float inv = rsqrtf(blockSum(sq, shared) / static_cast<float>(length) + eps);
    for (int64_t i = threadIdx.x; i < length; i += blockDim.x) {
      int64_t c = ((base + i) / inner) % channels;
      float y = (value(i) - mean) * inv * loadF(gamma, c) + loadF(beta, c);
      if (relu && y < 0.f) y *= alpha;
      storeF(out, base + i, y);
    }
  }
}

template <typename T, typename A>
void launchTyped(SegmentNormArgs const& a, cudaStream_t stream) {
  int64_t blocks = a.segments < 65535 * 16 ? a.segments : 65535 * 16;
  segmentNormKernel<T, A><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<T const*>(a.in), static_cast<T const*>(a.skip), a.preBias, static_cast<A const*>(a.gamma),
      static_cast<A const*>(a.beta), static_cast<T*>(a.out), a.segments, a.length, a.inner, a.channels, a.eps, a.relu,
      a.alpha);
}

}  // namespace

std::string launchSegmentNorm(SegmentNormArgs const& a, cudaStream_t stream) {
  if (a.segments <= 0 || a.length <= 0) return "";
  if (a.half && a.affineHalf) {
    launchTyped<__half, __half>(a, stream);
  } else if (a.half) {
    launchTyped<__half, float>(a, stream);
  } else if (a.affineHalf) {
    launchTyped<float, __half>(a, stream);
  } else {
    launchTyped<float, float>(a, stream);
  }
  return launchStatus("normalization kernel");
}

}  // namespace kiln::plugin::cuda
