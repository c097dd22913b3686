// Device launchers of the small index-driven data-movement ops: Shape (dims written by value), OneHot and
// ReverseSequence. Elements move as raw bytes of 1/2/4/8; plain signatures for nvcc and the host compiler.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// The dims of a shape, passed by value.
struct ShapeValues {
  int32_t rank = 0;
  int64_t d[8] = {};
};

/// out[i] = dims.d[i] as int64 (out64) or int32, i < rank; nothing runs for rank 0.
cudaError_t launchWriteShape(void* out, bool out64, ShapeValues const& dims, cudaStream_t stream);

/// Index element types of OneHot and ReverseSequence.
enum IndexCode : int32_t { kIndexInt32 = 0, kIndexInt64 = 1, kIndexFloat = 2 };

/// OneHot: y[o, j, i] = values[j == k ? 1 : 0] with k = indices[o, i] (+depth when negative; floats truncate),
/// over outer x depth x inner.
cudaError_t launchOneHot(void const* indices, int32_t indexCode, void const* values, void* out, int32_t elemSize,
                         int64_t outer, int64_t depth, int64_t inner, cudaStream_t stream);

/// ReverseSequence over n elements: the first lens[b] steps along the sequence axis are reversed, with
/// b = (lin / batchStride) % batch and t = (lin / seqStride) % steps; a length outside [0, steps] copies.
cudaError_t launchReverseSequence(void const* x, void const* lens, bool lens64, void* y, int32_t elemSize, int64_t n,
                                  int64_t batch, int64_t batchStride, int64_t steps, int64_t seqStride,
                                  cudaStream_t stream);

}  // namespace kiln::cuda
