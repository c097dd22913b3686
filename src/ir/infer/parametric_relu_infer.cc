// Shape inference of ParametricReLU: y = x >= 0 ? x : slope * x, slope broadcast (unidirectionally,
// right-aligned) to x; y has x's shape and type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferParametricReLU(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1)) return ctx.error("needs inputs x and slope");
  Dims const& x = ctx.in[0].shape;
  Dims const& s = ctx.in[1].shape;
  if (ctx.in[0].dtype != ctx.in[1].dtype)
    return ctx.error("slope type ", dataTypeName(ctx.in[1].dtype), " differs from the input type ",
                     dataTypeName(ctx.in[0].dtype));
  if (s.nbDims > x.nbDims)
    return ctx.error("slope ", dimsToString(s), " has a higher rank than the input ", dimsToString(x));
  for (int32_t i = 0; i < s.nbDims; ++i) {
    int64_t sd = s.d[s.nbDims - 1 - i];
    int64_t xd = x.d[x.nbDims - 1 - i];
    if (sd >= 0 && xd >= 0 && sd != 1 && sd != xd)
      return ctx.error("slope ", dimsToString(s), " does not broadcast to the input ", dimsToString(x));
  }
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kParametricReLU, inferParametricReLU);

}  // namespace kiln::ir
