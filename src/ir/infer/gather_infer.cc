// Shape inference of Gather in TensorRT's kDEFAULT mode: output dims are data[:axis] + indices[e:] +
// data[axis+1:], where e = num_elementwise_dims (0, or 1 when data and indices share the leading dim).
// kELEMENT and kND are not supported yet.
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferGather(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs exactly two inputs");
  Attributes const& a = ctx.node.attrs;
  int64_t modeValue = a.getInt("mode", 0);
  if (modeValue < 0 || modeValue >= EnumMax<GatherMode>())
    return ctx.error("has an invalid mode ", modeValue);
  switch (static_cast<GatherMode>(modeValue)) {
    case GatherMode::kDEFAULT:
      break;
    case GatherMode::kELEMENT:
    case GatherMode::kND:
      return unsupported(ctx.node.describe(), ": gather modes kELEMENT and kND are not supported yet");
  }
  Dims const& data = ctx.in[0].shape;
  Dims const& idx = ctx.in[1].shape;
  DataType it = ctx.in[1].dtype;
  if (it != DataType::kINT32 && it != DataType::kINT64)
    return ctx.error("indices must be int32 or int64, not ", dataTypeName(it));
  if (data.nbDims < 1)
    return ctx.error("cannot gather from a rank-0 tensor");
  int64_t ne = a.getInt("num_elementwise_dims", 0);
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
