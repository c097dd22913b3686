// Device helpers shared by the built-in plugins' kernels: fp16/fp32 loads and stores, launch geometry, error
// text. Included by the .cu files of this folder only.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace kiln::plugin::cuda {

__device__ __forceinline__ float loadF(float const* p, int64_t i) { return p[i]; }
__device__ __forceinline__ float loadF(__half const* p, int64_t i) { return __half2float(p[i]); }
__device__ __forceinline__ void storeF(float* p, int64_t i, float v) { p[i] = v; }
__device__ __forceinline__ void storeF(__half* p, int64_t i, float v) { p[i] = __float2half_rn(v); }

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n elements (at least 1, at most 65535 * 16).
inline unsigned blocksFor(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b < 1) b = 1;
  if (b > 65535 * 16) b = 65535 * 16;
  return static_cast<unsigned>(b);
}

/// "" after a successful launch, else the CUDA error naming `what`.
inline std::string launchStatus(char const* what) {
  cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return "";
  return std::string(what) + ": CUDA error " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

}  // namespace kiln::plugin::cuda
