// Launchers of the Cumulative kernels (cumulative.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// Running sums of x viewed as [outer, n, inner] along n into y (same dtype: float, half, bf16 accumulating in
/// fp64 as the reference; int32, int64 exact with wrap-around), inclusive or exclusive, forwards or backwards.
/// Returns false for another dtype.
bool launchCumulativeSum(int32_t dtype, void const* x, void* y, int64_t outer, int64_t n, int64_t inner, bool exclusive,
                         bool reverse, cudaStream_t stream);

}  // namespace kiln::cuda
