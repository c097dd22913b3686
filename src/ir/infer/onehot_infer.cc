// Shape inference of OneHot: the indices' shape with a new axis of extent depth, the values' type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferOneHot(InferContext& ctx) {
  if (ctx.numInputs() != 3 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2))
    return ctx.error("needs inputs indices, values and depth");
  TensorInfo const& idx = ctx.in[0];
  TensorInfo const& values = ctx.in[1];
  TensorInfo const& depth = ctx.in[2];
  if (idx.dtype == DataType::kBOOL || !isSupportedType(idx.dtype))
    return ctx.error("indices must be numeric, not ", dataTypeName(idx.dtype));
  if (!isSupportedType(values.dtype)) return ctx.error("values cannot be ", dataTypeName(values.dtype));
  if (values.shape.nbDims != 1 || (values.shape.d[0] >= 0 && values.shape.d[0] != 2))
    return ctx.error("values must be [2] (off, on), not ", dimsToString(values.shape));
  if (depth.dtype == DataType::kBOOL || !isSupportedType(depth.dtype) || volume(depth.shape) > 1 ||
      depth.shape.nbDims > 1)
    return ctx.error("depth must be a 0-D numeric tensor");
  int32_t rank = idx.shape.nbDims;
  if (rank + 1 > Dims::MAX_DIMS) return ctx.error("the output would have too many dimensions");
  int64_t axis = ctx.node.attrs.getInt("axis", -1);
  if (axis < -(rank + 1) || axis > rank) return ctx.error("axis ", axis, " is out of range for output rank ", rank + 1);
  if (axis < 0) axis += rank + 1;
  int64_t d = -1;
  if (ctx.inValues[2]) {
    d = static_cast<int64_t>(ctx.inValues[2]->doubleAt(0));
    if (d < 1) return ctx.error("depth must be >= 1, not ", d);
  }
  Dims out{};
  out.nbDims = rank + 1;
  for (int32_t i = 0, j = 0; i < rank + 1; ++i) out.d[i] = i == axis ? d : idx.shape.d[j++];
  ctx.out[0] = {values.dtype, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kOneHot, inferOneHot);

}  // namespace kiln::ir
