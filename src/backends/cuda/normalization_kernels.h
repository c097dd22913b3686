// Launchers of the Normalization kernels (normalization.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/reduce_kernels.h"

namespace kiln::cuda {

/// y = (x - mean) / sqrt(var + eps) * scale + bias, mean and population variance (two passes, fp32) over `inner`
/// for each index of `outer`; both spaces carry strides into x/y (tensor 0), scale (1) and bias (2). x and y share
/// `dtype` (float, half, bf16); scale and bias may each be any of those. Returns false for another x dtype.
bool launchNormalization(int32_t dtype, void const* x, void* y, void const* scale, int32_t scaleType, void const* bias,
                         int32_t biasType, StridedSpace const& outer, StridedSpace const& inner, float epsilon,
                         cudaStream_t stream);

}  // namespace kiln::cuda
