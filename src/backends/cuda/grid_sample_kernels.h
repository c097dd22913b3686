// Device launcher of GridSample (ONNX / PyTorch grid_sample): images [N, C, H, W] with nearest, bilinear or
// bicubic sampling, volumes [N, C, D, H, W] with nearest or trilinear, zeros / border / reflection padding.
// One thread per output element in fp64, as the reference; coordinates are computed without fma contraction so
// nearest picks the reference's pixel.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// mode: InterpolationMode's integer; sample: SampleMode's integer (kFILL, kCLAMP or kREFLECT). dims: N, C, then
/// the spatial extents of x (2 or 3 of them, outermost first); outDims: the output's spatial extents.
struct GridSamplePlan {
  int32_t mode = 1, sample = 3, alignCorners = 0, spatial = 2;
  int64_t n = 0, c = 0;
  int64_t inDims[3] = {};
  int64_t outDims[3] = {};
};

/// xType / gridType: DataType codes (float, half, bf16); y has x's type. cudaErrorInvalidValue for other types.
cudaError_t launchGridSample(void const* x, int32_t xType, void const* grid, int32_t gridType, void* y,
                             GridSamplePlan const& plan, cudaStream_t stream);

}  // namespace kiln::cuda
