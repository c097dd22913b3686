// Launchers of the TopK kernels (topk.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// TopK of x viewed as [outer, n, inner] along n: values [outer, k, inner] (x's dtype) and indices (int32 or int64
/// by `indices64`), in the reference's stable order (ties keep the lower index first; NaN above every number).
/// dtype: float, half, bf16, int32, int64. Returns false for another dtype.
bool launchTopK(int32_t dtype, void const* x, void* values, void* indices, bool indices64, int64_t outer, int64_t n,
                int64_t inner, int64_t k, bool largest, cudaStream_t stream);

}  // namespace kiln::cuda
