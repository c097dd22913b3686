// Launchers of the Normalization kernels (normalization.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/reduce_kernels.h"
#include "backends/cuda/row_variant.h"

namespace kiln::cuda {

/// The kernel launchNormalization chose (for tests and the benchmark).
enum class NormPath : int32_t {
  kNone = 0,        ///< nothing launched (unsupported dtype)
  kWarpVec = 1,     ///< one warp per row, 16-byte vectors held in registers, persistent warps prefetching
  kClusterVec = 2,  ///< a block or a cluster of 2 to 8 blocks per row, 16-byte vectors in registers, prefetching
  kWarpScalar = 3,  ///< one warp per row, element by element (rows not in whole vectors, or misaligned)
  kBlock = 4,       ///< one block per group, three passes over memory (any layout)
};

/// y = (x [+ residual] - mean) / sqrt(var + eps) * scale + bias, mean and population variance (two passes, fp32)
/// over `inner` for each index of `outer`; both spaces carry strides into x/y (tensor 0), scale (1) and bias (2).
/// x and y are dense row-major; x, y and residual (optional: null for none) share `dtype` (float, half, bf16);
/// scale and bias may each be any of those. The residual holds `residualCount` elements: x's shape, or it with
/// leading dims 1, so element i of x adds element i % residualCount. Returns the path launched, kNone (nothing
/// launched) for another x dtype. `forceGeneric` runs the block-per-group kernel whatever the layout (tests compare
/// the others with it). `variant` picks the vectorized kernels' variant (row_variant.h; the benchmark compares them).
NormPath launchNormalization(int32_t dtype, void const* x, void const* residual, int64_t residualCount, void* y,
                             void const* scale, int32_t scaleType, void const* bias, int32_t biasType,
                             StridedSpace const& outer, StridedSpace const& inner, float epsilon, cudaStream_t stream,
                             bool forceGeneric = false, RowVariant variant = RowVariant::kDefault);

}  // namespace kiln::cuda
