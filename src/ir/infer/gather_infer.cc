// Shape inference of Gather. kDEFAULT: output dims are data[:axis] + indices[e:] + data[axis+1:], where
// e = num_elementwise_dims (0, or 1 when data and indices share the leading dim). kELEMENT (ONNX
// GatherElements): output dims are the indices' dims. kND (ONNX GatherND with batch_dims = e): output dims are
// indices[:-1] + data[e + indices[-1]:].
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferGatherElements(InferContext& ctx, Dims const& data, Dims const& idx, int64_t ne) {
  if (ne != 0)
    return ctx.error("kELEMENT mode needs num_elementwise_dims 0, not ", ne);
  Result<int32_t> axis = normalizeAxis(ctx.node.attrs.getInt("axis", 0), data.nbDims);
  if (!axis.isOk())
    return ctx.error(axis.status().message());
  if (idx.nbDims != data.nbDims)
    return ctx.error("kELEMENT mode needs indices of the data's rank ", data.nbDims, ", not ", idx.nbDims);
  for (int32_t i = 0; i < data.nbDims; ++i)
    if (i != *axis && data.d[i] >= 0 && idx.d[i] > data.d[i])
      return ctx.error("indices ", dimsToString(idx), " exceed data ", dimsToString(data), " on axis ", i);
  ctx.out[0] = {ctx.in[0].dtype, idx};
  return Status::ok();
}

Status inferGatherNd(InferContext& ctx, Dims const& data, Dims const& idx, int64_t b) {
  if (b < 0)
    return ctx.error("num_elementwise_dims must be >= 0, not ", b);
  if (idx.nbDims < 1)
    return ctx.error("kND mode needs indices of rank >= 1");
  if (b >= idx.nbDims || b >= data.nbDims)
    return ctx.error("num_elementwise_dims ", b, " must be less than the ranks of data ", dimsToString(data),
                     " and indices ", dimsToString(idx));
  int64_t k = idx.d[idx.nbDims - 1];
  if (k < 0)
    return ctx.error("the last dim of kND indices must be known at build time");
  if (k < 1 || b + k > data.nbDims)
    return ctx.error("index tuples of length ", k, " do not fit data ", dimsToString(data), " after ", b,
                     " element-wise dims");
  Dims out{};
  int64_t rank = int64_t{idx.nbDims} - 1 + data.nbDims - b - k;
  if (rank > Dims::MAX_DIMS)
    return ctx.error("output would have rank ", rank);
  out.nbDims = static_cast<int32_t>(rank);
  int32_t o = 0;
  for (int32_t i = 0; i + 1 < idx.nbDims; ++i) {
    out.d[o] = idx.d[i];
    if (i < b) {
      if (data.d[i] >= 0 && idx.d[i] >= 0 && data.d[i] != idx.d[i])
        return ctx.error("element-wise dim ", i, " differs: data ", dimsToString(data), ", indices ",
                         dimsToString(idx));
      if (out.d[o] < 0)
        out.d[o] = data.d[i];
    }
    ++o;
  }
  for (int64_t i = b + k; i < data.nbDims; ++i)
    out.d[o++] = data.d[i];
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

Status inferGather(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs exactly two inputs");
  Attributes const& a = ctx.node.attrs;
  int64_t modeValue = a.getInt("mode", 0);
  if (modeValue < 0 || modeValue >= EnumMax<GatherMode>())
    return ctx.error("has an invalid mode ", modeValue);
  Dims const& data = ctx.in[0].shape;
  Dims const& idx = ctx.in[1].shape;
  DataType it = ctx.in[1].dtype;
  if (it != DataType::kINT32 && it != DataType::kINT64)
    return ctx.error("indices must be int32 or int64, not ", dataTypeName(it));
  if (data.nbDims < 1)
    return ctx.error("cannot gather from a rank-0 tensor");
  int64_t ne = a.getInt("num_elementwise_dims", 0);
  switch (static_cast<GatherMode>(modeValue)) {
    case GatherMode::kDEFAULT:
      break;
    case GatherMode::kELEMENT:
      return inferGatherElements(ctx, data, idx, ne);
    case GatherMode::kND:
      return inferGatherNd(ctx, data, idx, ne);
  }
  if (ne != 0 && ne != 1)
    return ctx.error("num_elementwise_dims must be 0 or 1, not ", ne);
  Result<int32_t> axis = normalizeAxis(a.getInt("axis", 0), data.nbDims);
  if (!axis.isOk())
    return ctx.error(axis.status().message());
  if (*axis < ne)
    return ctx.error("axis ", *axis, " must not be one of the ", ne, " element-wise dims");
  if (idx.nbDims < ne)
    return ctx.error("indices of rank ", idx.nbDims, " have fewer than ", ne, " element-wise dims");
  int64_t outRank = int64_t{data.nbDims} + idx.nbDims - 1 - ne;
  if (outRank > Dims::MAX_DIMS)
    return ctx.error("output would have rank ", outRank, " (at most ", Dims::MAX_DIMS, ")");
  Dims out{};
  out.nbDims = static_cast<int32_t>(outRank);
  int32_t o = 0;
  for (int32_t i = 0; i < *axis; ++i)
    out.d[o++] = data.d[i];
  for (int32_t i = static_cast<int32_t>(ne); i < idx.nbDims; ++i)
    out.d[o++] = idx.d[i];
  for (int32_t i = *axis + 1; i < data.nbDims; ++i)
    out.d[o++] = data.d[i];
  if (ne == 1) {
    if (data.d[0] >= 0 && idx.d[0] >= 0 && data.d[0] != idx.d[0])
      return ctx.error("element-wise dim 0 differs: data ", dimsToString(data), ", indices ", dimsToString(idx));
    if (out.d[0] < 0)
      out.d[0] = idx.d[0];
  }
  ctx.out[0] = {ctx.in[0].dtype, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kGather, inferGather);

}  // namespace kiln::ir
