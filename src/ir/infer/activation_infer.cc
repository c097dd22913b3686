// Shape inference of Activation: the output has the input's type and shape.
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferActivation(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0))
    return ctx.error("needs exactly one input");
  int64_t type = ctx.node.attrs.getInt("type", -1);
  if (type < 0 || type >= EnumMax<ActivationType>())
    return ctx.error("has an invalid activation type ", type);
  if (!isFloatType(ctx.in[0].dtype))
    return ctx.error("needs a floating-point input, not ", dataTypeName(ctx.in[0].dtype));
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kActivation, inferActivation);

}  // namespace kiln::ir
