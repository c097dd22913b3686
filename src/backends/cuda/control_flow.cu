// The If/Loop tactics' own kernel: writing a Loop's iteration number into device memory.
#include "backends/cuda/control_flow_kernels.h"

namespace kiln::cuda {
namespace {

__global__ void storeInt64Kernel(int64_t* dst, int64_t value) { *dst = value; }

}  // namespace

cudaError_t launchStoreInt64(int64_t* dst, int64_t value, cudaStream_t stream) {
  storeInt64Kernel<<<1, 1, 0, stream>>>(dst, value);
  return cudaGetLastError();
}

}  // namespace kiln::cuda
