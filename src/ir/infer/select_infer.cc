// Shape inference of Select: numpy broadcasting of condition, then and else; the type of then/else.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferSelect(InferContext& ctx) {
  if (ctx.numInputs() != 3 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2))
    return ctx.error("needs inputs condition, then and else");
  if (ctx.in[0].dtype != DataType::kBOOL) return ctx.error("condition must be bool, not ", dataTypeName(ctx.in[0].dtype));
  if (ctx.in[1].dtype != ctx.in[2].dtype)
    return ctx.error("then and else differ in type: ", dataTypeName(ctx.in[1].dtype), " and ",
                     dataTypeName(ctx.in[2].dtype));
  if (!isSupportedType(ctx.in[1].dtype)) return ctx.error("cannot select ", dataTypeName(ctx.in[1].dtype));
  Result<Dims> s = broadcastShapes(ctx.in[0].shape, ctx.in[1].shape);
  if (!s.isOk()) return ctx.error(s.status().message());
  Result<Dims> s2 = broadcastShapes(*s, ctx.in[2].shape);
  if (!s2.isOk()) return ctx.error(s2.status().message());
  ctx.out[0] = {ctx.in[1].dtype, *s2};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kSelect, inferSelect);

}  // namespace kiln::ir
