// Device launchers of Resize (TensorRT's IResizeLayer): nearest over raw bytes (1/2/4/8), N-D linear and cubic
// over float/half/bf16 (fp64 weights and accumulation, rounded once on store). Every output element computes
// its own per-axis source coordinates exactly as the reference does (fp64, no contraction), so nearest picks
// the same elements bit for bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// Attribute values as the integers of InterpolationMode, ResizeCoordinateTransformation, ResizeSelector and
/// ResizeRoundMode; scales per axis (the given ones when scaleGiven, else out / in).
struct ResizePlan {
  int32_t rank = 0;
  int32_t mode = 0, transform = 1, selector = 0, rounding = 2;
  int32_t excludeOutside = 0, scaleGiven = 0;
  double cubicA = -0.75;
  int64_t inDims[8] = {};
  int64_t outDims[8] = {};
  double scales[8] = {};
  /// Cubic only: 1 on the axes that are interpolated (the two innermost, and any with a given scale other than
  /// 1); the others map index to index.
  int32_t cubicAxis[8] = {};
};

/// Nearest: elemSize 1/2/4/8. Nothing runs for an empty output.
cudaError_t launchResizeNearest(void const* x, void* y, int32_t elemSize, ResizePlan const& plan, cudaStream_t stream);

/// Linear or cubic: dtype is the DataType code (float, half, bf16); false when the code is not one of those.
cudaError_t launchResizeInterpolate(void const* x, void* y, int32_t dtype, ResizePlan const& plan, cudaStream_t stream);

}  // namespace kiln::cuda
