// CUDA kernels of the element-wise built-ins: LReLU_TRT, Clip_TRT, CustomGeluPluginDynamic.
#include "plugins/builtin/cuda/common.cuh"
#include "plugins/builtin/cuda/launch.h"

namespace kiln::plugin::cuda {
namespace {

template <typename T>
__global__ void activationKernel(int act, float p0, float p1, float const* bias, int64_t biasLength, T const* in,
                                 T* out, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float x = loadF(in, i);
    float y;
    if (act == static_cast<int>(Activation::kLeakyRelu)) {
      y = x >= 0.f ? x : p0 * x;
    } else if (act == static_cast<int>(Activation::kClip)) {
      y = fminf(fmaxf(x, p0), p1);
    } else {
      float v = x + (bias ? bias[i % biasLength] : 0.f);
      y = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
    }
    storeF(out, i, y);
  }
}

}  // namespace

std::string launchActivation(Activation act, float p0, float p1, float const* bias, int64_t biasLength,
                             void const* in, void* out, int64_t n, bool half, cudaStream_t stream) {
  if (n <= 0) return "";
  if (half) {
    activationKernel<__half><<<blocksFor(n), kThreads, 0, stream>>>(static_cast<int>(act), p0, p1, bias, biasLength,
                                                                    static_cast<__half const*>(in),
                                                                    static_cast<__half*>(out), n);
  } else {
    activationKernel<float><<<blocksFor(n), kThreads, 0, stream>>>(static_cast<int>(act), p0, p1, bias, biasLength,
                                                                   static_cast<float const*>(in),
                                                                   static_cast<float*>(out), n);
  }
  return launchStatus("activation kernel");
}

void* uploadToDevice(void const* host, size_t bytes, std::string* error) {
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaSuccess) e = cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) {
    if (p) cudaFree(p);
    if (error) *error = std::string("copying plugin weights to the device failed: ") + cudaGetErrorString(e);
    return nullptr;
  }
  return p;
}

void freeDevice(void* p) {
  if (p) cudaFree(p);
}

}  // namespace kiln::plugin::cuda
