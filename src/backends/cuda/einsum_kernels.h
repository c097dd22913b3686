// Launchers of the Einsum kernels (einsum.cu): a direct kernel over the output elements that loops over the
// summed labels, with a block-per-output variant for small outputs with long sums.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// An einsum prepared for the device: loop labels (the output's first, in output order, then the summed ones),
/// their extents and each input's element stride along each of them (0 where the input broadcasts).
struct EinsumParams {
  static constexpr int kMaxInputs = 8;
  static constexpr int kMaxLoops = 24;
  int32_t numInputs = 0;
  int32_t numOut = 0;  // loops [0, numOut) index the output (row-major)
  int32_t numSum = 0;  // loops [numOut, numOut + numSum) are summed
  int64_t ext[kMaxLoops] = {};
  int64_t stride[kMaxInputs][kMaxLoops] = {};
  void const* in[kMaxInputs] = {};
};

/// y[o] = sum over the summed loops of the product of the inputs' elements. dtype (all inputs and y): float,
/// half, bf16 (fp32 math), int8, uint8, int32, int64 (64-bit wrapping math, wrapped on store). outCount > 0;
/// sumCount may be 0 (zeros). Returns false for another dtype.
bool launchEinsum(int32_t dtype, EinsumParams const& p, void* y, int64_t outCount, int64_t sumCount,
                  cudaStream_t stream);

}  // namespace kiln::cuda
