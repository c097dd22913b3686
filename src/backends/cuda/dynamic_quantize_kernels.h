// Launchers of the DynamicQuantize kernels (dynamic_quantize.cu): per block, the scale from the absolute maximum,
// then the block quantized with it (fp8 or int8), exactly as the reference rounds.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// x [d0..d{rank-1}] cut into blocks of block[i] (each d[i] a multiple); scales [d[i] / block[i]] row-major.
struct DynamicQuantizeShape {
  int32_t rank = 0;
  int64_t x[8] = {};       // extents of x
  int64_t block[8] = {};   // block extents
  int64_t scale[8] = {};   // extents of the scales (x / block)
  int64_t stride[8] = {};  // element strides of x
};

/// xType: float, half, bf16; yType: fp8, int8; scaleType: float, half, bf16, fp8; dq: optional 0-D
/// double-quantization scale on the device (float, half or bf16 by dqType; null: 1). numScales > 0. Returns
/// false for other types.
bool launchDynamicQuantize(int32_t xType, int32_t yType, int32_t scaleType, int32_t dqType,
                           DynamicQuantizeShape const& shape, int64_t numScales, int64_t blockVolume, void const* x,
                           void const* dq, void* y, void* scales, cudaStream_t stream);

}  // namespace kiln::cuda
