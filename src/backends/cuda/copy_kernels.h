// The data-movement family's generic kernels: an N-d strided gather-copy (any element of 1/2/4/8 bytes, moved as
// raw bytes) and a per-axis sampled copy (Slice's wrap/clamp/fill/reflect modes, Padding). Plain signatures, so
// both nvcc and the host compiler include this header.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

/// Up to rank 8 (Dims::MAX_DIMS).
constexpr int32_t kCopyMaxRank = 8;

/// out[outOffset + sum c[d]*outStrides[d]] = in[src(c)] for every coordinate c of `dims` (row-major order),
/// where src(c) = inOffset + sum c[d]*inStrides[d] when rank2 == 0; otherwise L = sum c[d]*inStrides[d] is a
/// linear index that is split by dims2 (row-major) into c2 and src = inOffset + sum c2[d]*strides2[d] (a
/// transpose, a reshape, then another transpose: Shuffle). Strides are in elements and may be negative.
struct CopyPlan {
  int32_t rank = 0;
  int64_t dims[kCopyMaxRank] = {};
  int64_t inStrides[kCopyMaxRank] = {};
  int64_t outStrides[kCopyMaxRank] = {};
  int32_t rank2 = 0;
  int64_t dims2[kCopyMaxRank] = {};
  int64_t strides2[kCopyMaxRank] = {};
  int64_t inOffset = 0;
  int64_t outOffset = 0;
};

/// Runs `plan` on elements of `elemSize` bytes (1, 2, 4 or 8). Returns the launch error (cudaSuccess when the
/// plan has no elements: nothing is launched). A one-stage plan whose last dim is contiguous in both tensors
/// moves k elements at a time (widenCopyPlan).
cudaError_t launchStridedCopy(void const* in, void* out, int32_t elemSize, CopyPlan const& plan, cudaStream_t stream);

/// Rewrites a one-stage plan whose last dim has stride 1 in both tensors to move k elements of `elemSize`
/// bytes as one word of k * elemSize <= 16 bytes (the largest k, a power of two, that divides the last dim,
/// every other stride and both offsets, with both pointers aligned to the word); returns k (1: unchanged).
int32_t widenCopyPlan(void const* in, void const* out, int32_t elemSize, CopyPlan& plan);

/// Sample modes of the sampled copy (SampleMode's values).
enum SampleCode : int32_t { kSampleStrict = 0, kSampleWrap = 1, kSampleClamp = 2, kSampleFill = 3, kSampleReflect = 4 };

/// y[c] = x[s(c)] with s(c)[d] = start[d] + c[d]*stride[d] mapped into [0, inDims[d]) by `mode` (the caller has
/// checked that strict mode stays in bounds and that wrap/clamp/reflect axes are not empty); in fill mode an
/// out-of-range coordinate writes the fill value: the element at `fillDevice` when not null, else the low
/// elemSize bytes of `fillBits`. x and y are dense row-major.
struct SamplePlan {
  int32_t rank = 0;
  int32_t mode = 0;
  int64_t outDims[kCopyMaxRank] = {};
  int64_t inDims[kCopyMaxRank] = {};
  int64_t start[kCopyMaxRank] = {};
  int64_t stride[kCopyMaxRank] = {};
  uint64_t fillBits = 0;
  void const* fillDevice = nullptr;
};

cudaError_t launchSampledCopy(void const* in, void* out, int32_t elemSize, SamplePlan const& plan, cudaStream_t stream);

/// Merges adjacent dims that are contiguous in both input and output of a one-stage plan and drops size-1 dims
/// (fewer divisions per element). Keeps a rank of at least 1.
inline void simplifyCopyPlan(CopyPlan& p) {
  if (p.rank2 != 0) return;
  CopyPlan q = p;
  q.rank = 0;
  for (int32_t d = 0; d < p.rank; ++d) {
    if (p.dims[d] == 1) continue;
    if (q.rank > 0) {
      int32_t l = q.rank - 1;
      if (q.inStrides[l] == p.inStrides[d] * p.dims[d] && q.outStrides[l] == p.outStrides[d] * p.dims[d]) {
        q.dims[l] *= p.dims[d];
        q.inStrides[l] = p.inStrides[d];
        q.outStrides[l] = p.outStrides[d];
        continue;
      }
    }
    q.dims[q.rank] = p.dims[d];
    q.inStrides[q.rank] = p.inStrides[d];
    q.outStrides[q.rank] = p.outStrides[d];
    ++q.rank;
  }
  if (q.rank == 0) {
    bool empty = false;
    for (int32_t d = 0; d < p.rank; ++d) empty = empty || p.dims[d] == 0;
    q.rank = 1;
    q.dims[0] = empty ? 0 : 1;
    q.inStrides[0] = q.outStrides[0] = 0;
  }
  p = q;
}

}  // namespace kiln::cuda
