// Launchers of the LRN kernel (lrn.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// TensorRT's cross-channel LRN of x [n, c, inner] into y (same dtype: float, half, bf16; fp32 math):
/// y = x / (k + alpha / window * sum of x^2 over channels [c - window/2, c + window/2] that exist) ^ beta.
/// Returns false for another dtype.
bool launchLrn(int32_t dtype, void const* x, void* y, int64_t n, int64_t c, int64_t inner, int64_t window, float alpha,
               float beta, float k, cudaStream_t stream);

}  // namespace kiln::cuda
