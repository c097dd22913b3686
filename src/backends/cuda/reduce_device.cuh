// Device helpers of the reduction/normalization family (.cu files only): offsets of a StridedSpace index, block-
// and warp-wide reductions by shuffles, NaN-propagating max/min as the reference computes them.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reduce_kernels.h"

namespace kiln::cuda::red {

/// Offsets of index i of space s into its first K tensors.
template <int K>
__device__ __forceinline__ void decode(StridedSpace const& s, int64_t i, int64_t (&off)[K]) {
  for (int t = 0; t < K; ++t) off[t] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    int64_t q = i / s.size[d];
    int64_t r = i - q * s.size[d];
    for (int t = 0; t < K; ++t) off[t] += r * s.stride[t][d];
    i = q;
  }
}

/// The offset of index i of space s into its first tensor.
__device__ __forceinline__ int64_t offset0(StridedSpace const& s, int64_t i) {
  if (s.rank == 1) return i * s.stride[0][0];  // the common contiguous case: no division
  int64_t off[1];
  decode<1>(s, i, off);
  return off[0];
}

// max/min as the reference: a NaN on either side wins (and stays).
__device__ __forceinline__ float nanMax(float a, float b) { return isnan(a) ? a : ((isnan(b) || b > a) ? b : a); }
__device__ __forceinline__ float nanMin(float a, float b) { return isnan(a) ? a : ((isnan(b) || b < a) ? b : a); }

struct SumOp {
  template <typename A>
  __device__ __forceinline__ A operator()(A a, A b) const {
    return a + b;
  }
};
struct MaxOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return nanMax(a, b); }
};

/// Reduces v over the warp with f; every lane gets the result.
template <typename A, typename F>
__device__ __forceinline__ A warpReduce(A v, F f) {
  for (int o = 16; o > 0; o >>= 1) v = f(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Reduces v over the block (blockDim.x a multiple of 32, at most 1024) with f; every thread gets the result.
/// `identity` is f's neutral value; `scratch` holds 33 values in shared memory; the block must reach this call
/// together.
template <typename A, typename F>
__device__ __forceinline__ A blockReduce(A v, F f, A identity, A* scratch) {
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warpReduce(v, f);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    A w = lane < warps ? scratch[lane] : identity;
    w = warpReduce(w, f);
    if (lane == 0) scratch[32] = w;
  }
  __syncthreads();
  return scratch[32];
}

/// Loads element i of a float tensor whose dtype code is known only at run time (scale/bias of any float type).
__device__ __forceinline__ float loadFloat(void const* p, int32_t dtype, int64_t i) {
  switch (dtype) {
    case dev::kHALF:
      return __half2float(static_cast<__half const*>(p)[i]);
    case dev::kBF16:
      return __bfloat162float(static_cast<__nv_bfloat16 const*>(p)[i]);
    default:
      return static_cast<float const*>(p)[i];
  }
}

}  // namespace kiln::cuda::red

