// Device helpers of the If/Loop tactics (control_flow.cc): the one kernel they need of their own, with a plain
// signature so that both nvcc and the host compiler include this header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// *dst = value, on `stream` (a Loop's iteration number: a kernel argument, so a CUDA graph captures it).
cudaError_t launchStoreInt64(int64_t* dst, int64_t value, cudaStream_t stream);

}  // namespace kiln::cuda
