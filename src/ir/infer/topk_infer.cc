// Shape inference of TopK: values and indices, the reduced axis replaced by k (from the attribute or input 1).
#include "ir/shape_inference.h"

#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferTopK(InferContext& ctx) {
  if (!ctx.present(0) || ctx.numInputs() > 2) return ctx.error("needs input x and an optional k");
  if (ctx.out.size() != 2) return ctx.error("needs two outputs (values, indices)");
  TensorInfo const& x = ctx.in[0];
  if (x.dtype == DataType::kBOOL || !isSupportedType(x.dtype))
    return ctx.error("cannot sort ", dataTypeName(x.dtype), " values");
  auto op = ctx.node.attrs.getInt("op", 0);
  if (op < 0 || op >= EnumMax<TopKOperation>()) return ctx.error("unknown TopK operation ", op);
  auto it = static_cast<DataType>(ctx.node.attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  if (it != DataType::kINT32 && it != DataType::kINT64)
    return ctx.error("indices type must be int32 or int64, not ", dataTypeName(it));
  int32_t rank = x.shape.nbDims;
  int64_t axis = ctx.node.attrs.getInt("axis", 0);
  if (rank < 1) return ctx.error("needs an input of rank >= 1");
  if (axis < 0 || axis >= rank) return ctx.error("axis ", axis, " is out of range for rank ", rank);
  int64_t k = ctx.node.attrs.getInt("k", 1);
  if (ctx.present(1)) {
    TensorInfo const& kt = ctx.in[1];
    if (!isIntegerType(kt.dtype) || kt.shape.nbDims != 0) return ctx.error("k must be a 0-D int32/int64 tensor");
    k = ctx.inValues[1] ? ctx.inValues[1]->intAt(0) : -1;
    if (ctx.inValues[1] && k < 0) return ctx.error("k must be >= 0, not ", k);
  } else if (k < 0) {
    return ctx.error("k must be >= 0, not ", k);
  }
  int64_t n = x.shape.d[axis];
  if (k >= 0 && n >= 0 && k > n) return ctx.error("k = ", k, " exceeds the axis extent ", n);
  Dims out = x.shape;
  out.d[axis] = k;
  ctx.out[0] = {x.dtype, out};
  ctx.out[1] = {it, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kTopK, inferTopK);

}  // namespace kiln::ir
