// Launchers of the Reduce kernels (reduce.cu), and the strided index space the reduction and normalization
// kernels of this family share: a row-major walk over a subset of a tensor's dims, with strides into several
// tensors at once, neighbouring dims merged where they are contiguous in every one of them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace kiln::cuda {

constexpr int kSpaceMaxDims = 10;  // Dims::MAX_DIMS plus the group dim group norm adds
constexpr int kSpaceMaxTensors = 3;

/// A row-major index space of `rank` dims; index i maps to sum(coord[d] * stride[t][d]) in tensor t.
struct StridedSpace {
  int32_t rank = 0;
  int64_t count = 1;
  int64_t size[kSpaceMaxDims] = {};
  int64_t stride[kSpaceMaxTensors][kSpaceMaxDims] = {};
};

/// The space over the dims d of `shape` (rank n) with mask[d] == select, in order, with strides[t][d] into each
/// of `tensors` tensors. Size-1 dims are dropped and a dim is merged into the one before it where every tensor
/// steps over it contiguously (so a layer norm over the last axes becomes one dim of stride 1).
inline StridedSpace makeSpace(int32_t n, int64_t const* shape, bool const* mask, bool select, int tensors,
                              int64_t const* const* strides) {
  StridedSpace s;
  for (int32_t d = 0; d < n; ++d) {
    if (mask[d] != select) continue;
    s.count *= shape[d];
    if (shape[d] == 1) continue;
    bool merge = s.rank > 0;
    for (int t = 0; t < tensors && merge; ++t) merge = s.stride[t][s.rank - 1] == strides[t][d] * shape[d];
    if (merge) {
      s.size[s.rank - 1] *= shape[d];
      for (int t = 0; t < tensors; ++t) s.stride[t][s.rank - 1] = strides[t][d];
    } else {
      s.size[s.rank] = shape[d];
      for (int t = 0; t < tensors; ++t) s.stride[t][s.rank] = strides[t][d];
      ++s.rank;
    }
  }
  return s;
}

/// Reduce operation codes (kiln::ReduceOperation values).
enum ReduceOpCode : int32_t { kRedSum = 0, kRedProd = 1, kRedMax = 2, kRedMin = 3, kRedAvg = 4 };

/// y[o] = reduction of x over `inner` at the offset `outer` gives for output o (row-major over the kept dims).
/// x and y have the same dtype (float, half, bf16: fp32 math; int32, int64: exact, wrapping; bool: max/min).
/// Returns false for a dtype it does not handle.
bool launchReduce(int32_t dtype, void const* x, void* y, StridedSpace const& outer, StridedSpace const& inner,
                  int32_t op, cudaStream_t stream);

}  // namespace kiln::cuda
