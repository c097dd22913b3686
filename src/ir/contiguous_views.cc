// Offsets of contiguous views (see contiguous_views.h): the byte arithmetic the builder plans with and the runtime
// checks again at the shapes it runs.
#include "ir/contiguous_views.h"

#include "core/dims.h"
#include "core/dtype.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

// Element size of a type whose elements are whole bytes and which Kiln computes (0 otherwise).
int64_t wholeByteSize(DataType t) { return isSupportedType(t) ? static_cast<int64_t>(dataTypeSize(t)) : 0; }

std::optional<std::vector<int64_t>> concatOffsets(Node const& n, std::vector<TensorInfo> const& in,
                                                  TensorInfo const& y) {
  Dims const& ys = y.shape;
  Result<int32_t> axis = normalizeAxis(n.attrs.getInt("axis", 0), ys.nbDims);
  int64_t esize = wholeByteSize(y.dtype);
  if (!axis.isOk() || esize == 0 || in.empty() || in.size() != n.inputs.size()) return std::nullopt;
  // One block per input only when nothing repeats the blocks: every dim before the axis is 1.
  for (int32_t d = 0; d < *axis; ++d)
    if (ys.d[d] != 1) return std::nullopt;
  int64_t inner = 1;
  for (int32_t d = *axis + 1; d < ys.nbDims; ++d) inner *= ys.d[d];
  std::vector<int64_t> offsets;
  int64_t along = 0;
  for (TensorInfo const& x : in) {
    if (x.dtype != y.dtype || x.shape.nbDims != ys.nbDims || !dimsKnown(x.shape)) return std::nullopt;
    for (int32_t d = 0; d < ys.nbDims; ++d)
      if (d != *axis && x.shape.d[d] != ys.d[d]) return std::nullopt;
    offsets.push_back(along * inner * esize);
    along += x.shape.d[*axis];
  }
  if (along != ys.d[*axis]) return std::nullopt;
  return offsets;
}

std::optional<std::vector<int64_t>> sliceOffset(Node const& n, TensorInfo const& x, TensorInfo const& y) {
  Dims const& xs = x.shape;
  int32_t rank = xs.nbDims;
  int64_t esize = wholeByteSize(x.dtype);
  // Parameters given at run time (inputs 1..5) or sampling other than strict bounds: not a plain byte range.
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i]) return std::nullopt;
  if (esize == 0 || x.dtype != y.dtype || y.shape.nbDims != rank || n.attrs.getInt("mode", 0) != 0 ||
      !n.attrs.has("start") || !n.attrs.has("size"))
    return std::nullopt;
  std::vector<int64_t> axes = n.attrs.getInts("axes");
  if (!n.attrs.has("axes"))
    for (int32_t i = 0; i < rank; ++i) axes.push_back(i);
  std::vector<int64_t> const start = n.attrs.getInts("start"), size = n.attrs.getInts("size");
  std::vector<int64_t> stride = n.attrs.getInts("stride", std::vector<int64_t>(axes.size(), 1));
  if (start.size() != axes.size() || size.size() != axes.size() || stride.size() != axes.size()) return std::nullopt;
  // Per dim: the first index taken, how many, and the step.
  std::vector<int64_t> first(static_cast<size_t>(rank), 0), count(xs.d, xs.d + rank),
      step(static_cast<size_t>(rank), 1);
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (size_t k = 0; k < axes.size(); ++k) {
    Result<int32_t> a = normalizeAxis(axes[k], rank);
    if (!a.isOk() || seen[static_cast<size_t>(*a)]) return std::nullopt;
    seen[static_cast<size_t>(*a)] = true;
    first[static_cast<size_t>(*a)] = start[k];
    count[static_cast<size_t>(*a)] = size[k];
    step[static_cast<size_t>(*a)] = stride[k];
  }
  int64_t total = 1;
  for (int32_t d = 0; d < rank; ++d) {
    auto i = static_cast<size_t>(d);
    if (count[i] != y.shape.d[d] || count[i] <= 0 || first[i] < 0 || first[i] > xs.d[d] - count[i]) return std::nullopt;
    if (count[i] > 1 && step[i] != 1) return std::nullopt;
    total *= count[i];
  }
  // One run: dims of one element up to the first sliced-to-more axis, whole dims after it.
  int32_t a = 0;
  while (a < rank - 1 && count[static_cast<size_t>(a)] == 1) ++a;
  for (int32_t d = a + 1; d < rank; ++d)
    if (count[static_cast<size_t>(d)] != xs.d[d]) return std::nullopt;
  int64_t offset = 0, rowElems = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    offset += first[static_cast<size_t>(d)] * rowElems;
    rowElems *= xs.d[d];
  }
  if (total != volume(y.shape)) return std::nullopt;
  return std::vector<int64_t>{offset * esize};
}

std::optional<std::vector<int64_t>> gatherOffset(Node const& n, TensorInfo const& x, TensorInfo const& y) {
  Value const* idx = n.input(1);
  int64_t esize = wholeByteSize(x.dtype);
  if (n.inputs.size() != 2 || !idx || !idx->producer || idx->producer->op != OpType::kConstant ||
      !idx->producer->constant || esize == 0 || x.dtype != y.dtype || n.attrs.getInt("mode", 0) != 0 ||
      n.attrs.getInt("num_elementwise_dims", 0) != 0)
    return std::nullopt;
  HostTensor const& c = *idx->producer->constant;
  if ((c.dtype() != DataType::kINT32 && c.dtype() != DataType::kINT64) || c.count() < 1) return std::nullopt;
  Dims const& xs = x.shape;
  Result<int32_t> axis = normalizeAxis(n.attrs.getInt("axis", 0), xs.nbDims);
  if (!axis.isOk()) return std::nullopt;
  for (int32_t d = 0; d < *axis; ++d)
    if (xs.d[d] != 1) return std::nullopt;
  // The indices (of any shape), in order, must name consecutive rows k, k + 1, ... of the axis: one run.
  std::vector<int64_t> const ks = c.toInt64Vector();
  int64_t const extent = xs.d[*axis];
  int64_t first = 0;
  for (size_t i = 0; i < ks.size(); ++i) {
    int64_t k = ks[i] < 0 ? ks[i] + extent : ks[i];
    if (k < 0 || k >= extent) return std::nullopt;
    if (i == 0) first = k;
    else if (k != first + static_cast<int64_t>(i)) return std::nullopt;
  }
  int64_t inner = 1;
  for (int32_t d = *axis + 1; d < xs.nbDims; ++d) inner *= xs.d[d];
  if (inner <= 0 || volume(y.shape) != inner * static_cast<int64_t>(ks.size())) return std::nullopt;
  return std::vector<int64_t>{first * inner * esize};
}

}  // namespace

std::optional<std::vector<int64_t>> contiguousViewOffsets(Node const& n, std::vector<TensorInfo> const& in,
                                                          std::vector<TensorInfo> const& out) {
  if (out.size() != 1 || n.outputs.size() != 1 || in.empty() || !dimsKnown(out[0].shape) || in[0].shape.nbDims < 0 ||
      !dimsKnown(in[0].shape))
    return std::nullopt;
  if (n.op == OpType::kConcatenation) return concatOffsets(n, in, out[0]);
  if (n.op == OpType::kSlice) return sliceOffset(n, in[0], out[0]);
  if (n.op == OpType::kGather) return gatherOffset(n, in[0], out[0]);
  return std::nullopt;
}

}  // namespace kiln::ir
