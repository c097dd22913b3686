// Shape inference of Cumulative: the output has the input's shape and type; the axis, when known here, is checked
// (an axis known only at run time is checked by the kernel).
#include "ir/shape_inference.h"

#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferCumulative(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1)) return ctx.error("needs inputs x and axis");
  TensorInfo const& x = ctx.in[0];
  if (x.dtype == DataType::kBOOL || !isSupportedType(x.dtype))
    return ctx.error("cannot accumulate ", dataTypeName(x.dtype), " values");
  auto op = ctx.node.attrs.getInt("op", 0);
  if (op < 0 || op >= EnumMax<CumulativeOperation>()) return ctx.error("unknown cumulative operation ", op);
  if (!isIntegerType(ctx.in[1].dtype) || ctx.in[1].shape.nbDims != 0)
    return ctx.error("axis must be a 0-D int32/int64 tensor");
  int32_t rank = x.shape.nbDims;
  if (rank < 1) return ctx.error("cannot accumulate a 0-D tensor");
  if (ctx.inValues[1]) {
    int64_t axis = ctx.inValues[1]->intAt(0);
    if (axis < -rank || axis >= rank) return ctx.error("axis ", axis, " is out of range for rank ", rank);
  }
  ctx.out[0] = x;
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kCumulative, inferCumulative);

}  // namespace kiln::ir
