// Shape inference of Padding (TensorRT's IPaddingLayer): zero padding (negative values crop) of the innermost
// axes, one pads_begin/pads_end entry per padded axis; y keeps x's type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferPadding(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  std::vector<int64_t> pb = ctx.node.attrs.getInts("pads_begin");
  std::vector<int64_t> pe = ctx.node.attrs.getInts("pads_end");
  if (pb.size() != pe.size()) return ctx.error("pads_begin has ", pb.size(), " entries but pads_end has ", pe.size());
  Dims const& x = ctx.in[0].shape;
  int32_t n = static_cast<int32_t>(pb.size());
  if (n > x.nbDims) return ctx.error(n, " padded axes but the input ", dimsToString(x), " has rank ", x.nbDims);
  Dims y = x;
  for (int32_t i = 0; i < n; ++i) {
    int32_t axis = x.nbDims - n + i;
    if (x.d[axis] < 0) continue;
    int64_t out = x.d[axis] + pb[i] + pe[i];
    if (out < 0)
      return ctx.error("padding (", pb[i], ", ", pe[i], ") crops axis ", axis, " of extent ", x.d[axis], " below zero");
    y.d[axis] = out;
  }
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kPadding, inferPadding);

}  // namespace kiln::ir
