// Host-side helpers of the data-movement family's tactics: which types move as raw bytes, dense copy plans, and
// running a copy or sampled-copy plan (picking the plain strided copy when every sample lands in bounds).
#pragma once

#include <string>

#include "backends/cuda/copy_kernels.h"
#include "backends/cuda/cuda_util.h"
#include "kiln/kiln.h"

namespace kiln::cuda {

static_assert(kSampleStrict == static_cast<int32_t>(SampleMode::kSTRICT_BOUNDS) &&
                  kSampleWrap == static_cast<int32_t>(SampleMode::kWRAP) &&
                  kSampleClamp == static_cast<int32_t>(SampleMode::kCLAMP) &&
                  kSampleFill == static_cast<int32_t>(SampleMode::kFILL) &&
                  kSampleReflect == static_cast<int32_t>(SampleMode::kREFLECT),
              "SampleCode mirrors SampleMode");

/// Types moved as unsigned integers of their width (every storable type but the sub-byte ones).
inline bool isByteCopyable(DataType t) {
  size_t s = dataTypeSize(t);
  return s == 1 || s == 2 || s == 4 || s == 8;
}

/// True when input i of the node is present (an edge, not an absent optional input).
inline bool hasInput(ir::Node const& n, size_t i) { return i < n.inputs.size() && n.inputs[i] != nullptr; }

/// Row-major element strides of `d` into `strides` (rank <= kCopyMaxRank).
inline void denseStrides(Dims const& d, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = d.nbDims - 1; i >= 0; --i) {
    strides[i] = s;
    s *= d.d[i];
  }
}

/// Runs a copy plan (simplified first), naming `what` on a launch error.
inline Status runCopyPlan(void const* in, void* out, DataType t, CopyPlan plan, cudaStream_t stream,
                          std::string const& what) {
  simplifyCopyPlan(plan);
  KILN_CUDA_RETURN_IF_ERROR(launchStridedCopy(in, out, static_cast<int32_t>(dataTypeSize(t)), plan, stream), what);
  return Status::ok();
}

/// Runs a sampled copy of dense x into dense y; when every coordinate of every axis lies inside the input it runs
/// as a strided copy instead (no per-axis mode logic, merged dims). The caller has validated the plan.
inline Status runSamplePlan(void const* in, void* out, DataType t, SamplePlan const& p, cudaStream_t stream,
                            std::string const& what) {
  int64_t total = 1;
  for (int32_t d = 0; d < p.rank; ++d) total *= p.outDims[d];
  if (total <= 0) return Status::ok();
  bool inside = true;
  for (int32_t d = 0; d < p.rank && inside; ++d) {
    int64_t first = p.start[d], last = p.start[d] + (p.outDims[d] - 1) * p.stride[d];
    inside = first >= 0 && first < p.inDims[d] && last >= 0 && last < p.inDims[d];
  }
  if (!inside) {
    KILN_CUDA_RETURN_IF_ERROR(launchSampledCopy(in, out, static_cast<int32_t>(dataTypeSize(t)), p, stream), what);
    return Status::ok();
  }
  CopyPlan c;
  c.rank = p.rank;
  int64_t inStride = 1, outStride = 1;
  for (int32_t d = p.rank - 1; d >= 0; --d) {
    c.dims[d] = p.outDims[d];
    c.inStrides[d] = p.stride[d] * inStride;
    c.outStrides[d] = outStride;
    c.inOffset += p.start[d] * inStride;
    inStride *= p.inDims[d];
    outStride *= p.outDims[d];
  }
  return runCopyPlan(in, out, t, c, stream, what);
}

}  // namespace kiln::cuda
