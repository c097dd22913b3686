// Device side of the vectorized Reformat (reformat_kernels.h): each thread decodes an output position into the
// logical coordinate it holds (or padding) and gathers that element from the input layout. Elements move as
// unsigned integers of their byte width, so every storage type is exact.
#include <cstdint>

#include "backends/cuda/device_types.cuh"
#include "backends/cuda/reformat_kernels.h"

namespace kiln::cuda {
namespace {

__device__ __forceinline__ int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Logical coordinate of memory position `i` of layout `s`; false for a padding channel.
__device__ __forceinline__ bool decodePosition(ReformatPlan const& p, ReformatSide const& s, int64_t i, int64_t* c) {
  int32_t k = s.vecDim;
  int64_t v = s.components;
  if (k < 0) {
#pragma unroll
    for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
      if (d < p.rank) {
        c[d] = i % p.dims[d];
        i /= p.dims[d];
      }
    return true;
  }
  if (s.minor) {
    int64_t cp = ceilDiv(p.dims[k], v) * v;
    c[k] = i % cp;
    i /= cp;
#pragma unroll
    for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
      if (d < p.rank && d != k) {
        c[d] = i % p.dims[d];
        i /= p.dims[d];
      }
    return c[k] < p.dims[k];
  }
  int64_t lane = i % v;
  i /= v;
#pragma unroll
  for (int32_t d = kReformatMaxRank - 1; d >= 0; --d)
    if (d < p.rank) {
      int64_t ext = d == k ? ceilDiv(p.dims[d], v) : p.dims[d];
      c[d] = i % ext;
      i /= ext;
    }
  c[k] = c[k] * v + lane;
  return c[k] < p.dims[k];
}

// Memory position of logical coordinate `c` in layout `s`.
__device__ __forceinline__ int64_t encodePosition(ReformatPlan const& p, ReformatSide const& s, int64_t const* c) {
  int32_t k = s.vecDim;
  int64_t v = s.components;
  int64_t idx = 0;
  if (k >= 0 && s.minor) {
#pragma unroll
    for (int32_t d = 0; d < kReformatMaxRank; ++d)
      if (d < p.rank && d != k) idx = idx * p.dims[d] + c[d];
    return idx * (ceilDiv(p.dims[k], v) * v) + c[k];
  }
#pragma unroll
  for (int32_t d = 0; d < kReformatMaxRank; ++d)
    if (d < p.rank) idx = d == k ? idx * ceilDiv(p.dims[d], v) + c[d] / v : idx * p.dims[d] + c[d];
  return k >= 0 ? idx * v + c[k] % v : idx;
}

template <typename E>
__global__ void reformatKernel(E const* __restrict__ in, E* __restrict__ out, ReformatPlan p) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.outCount;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t c[kReformatMaxRank] = {};
    out[i] = decodePosition(p, p.out, i, c) ? in[encodePosition(p, p.in, c)] : E{0};
  }
}

template <typename E>
cudaError_t reformatAs(void const* in, void* out, ReformatPlan const& p, cudaStream_t stream) {
  reformatKernel<E><<<dev::blocksFor(p.outCount), 256, 0, stream>>>(static_cast<E const*>(in), static_cast<E*>(out), p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchReformat(void const* in, void* out, int32_t elemSize, ReformatPlan const& plan, cudaStream_t stream) {
  if (plan.outCount <= 0) return cudaSuccess;
  switch (elemSize) {
    case 1:
      return reformatAs<uint8_t>(in, out, plan, stream);
    case 2:
      return reformatAs<uint16_t>(in, out, plan, stream);
    case 4:
      return reformatAs<uint32_t>(in, out, plan, stream);
    case 8:
      return reformatAs<uint64_t>(in, out, plan, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace kiln::cuda
