// Shape inference of SoftMax (TensorRT's ISoftMaxLayer): y has x's shape and type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferSoftMax(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0))
    return ctx.error("needs exactly one input");
  Dims const& x = ctx.in[0].shape;
  if (x.nbDims < 1)
    return ctx.error("input must have rank >= 1, got ", dimsToString(x));
  // Absent axis: TensorRT's default (rank - 3 when rank >= 3, else 0).
  int64_t axis = ctx.node.attrs.getInt("axis", x.nbDims >= 3 ? x.nbDims - 3 : 0);
  if (!normalizeAxis(axis, x.nbDims))
    return ctx.error("axis ", axis, " is out of range for ", dimsToString(x));
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kSoftMax, inferSoftMax);

}  // namespace kiln::ir
