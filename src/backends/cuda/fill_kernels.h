// Device launcher of Fill: kLINSPACE (exact int64 arithmetic for integer outputs with integer alpha/beta, fp64
// otherwise) and the reference's counter-based random fills (splitmix64 draws, so the same seed gives the same
// tensor as the host; normal values differ from the host's only by the device's fp64 log/cos rounding).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// op: FillOperation's integer. exact: integer linspace (alphaInt + sum i_d * intSteps[d], wrapping). Otherwise
/// linspace is alpha + sum i_d * steps[d] in fp64; uniform is alpha + (beta - alpha) * draw; normal is
/// alpha + beta * sqrt(-2 ln(1 - draw)) * cos(2 pi draw'), with key = splitmix64(seed).
struct FillPlan {
  int32_t rank = 0;
  int32_t op = 0;
  int32_t exact = 0;
  int64_t dims[8] = {};
  double alpha = 0, beta = 1;
  double steps[8] = {};
  int64_t alphaInt = 0;
  int64_t intSteps[8] = {};
  uint64_t key = 0;
};

/// dtype: the output's DataType code (float, half, bf16, fp8, int8, uint8, int32, int64); nothing runs when empty.
cudaError_t launchFill(void* y, int32_t dtype, FillPlan const& plan, cudaStream_t stream);

}  // namespace kiln::cuda
