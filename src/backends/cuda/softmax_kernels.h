// Launchers of the SoftMax kernels (softmax.cu), shared by SoftMax and RaggedSoftMax.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/row_variant.h"

namespace kiln::cuda {

/// Softmax of x viewed as [outer, len, inner] along len, into y of the same dtype (float, half, bf16; fp32 math,
/// max-subtracted). With `bounds` (int32, one per row; only for inner == 1) row r covers its first bounds[r]
/// elements and the rest are 0; a bound outside [0, len] makes the row NaN. Returns false for another dtype.
/// `forceGeneric` skips the register-resident vectorized kernels (tests compare them with the generic ones);
/// `variant` picks theirs (row_variant.h: kAlternative loads and stores evict-first; the benchmark compares them).
bool launchSoftmax(int32_t dtype, void const* x, void* y, int64_t outer, int64_t len, int64_t inner,
                   int32_t const* bounds, cudaStream_t stream, bool forceGeneric = false,
                   RowVariant variant = RowVariant::kDefault);

}  // namespace kiln::cuda
