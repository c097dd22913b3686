// Shape inference of RaggedSoftMax (TensorRT's IRaggedSoftMaxLayer): x [1, Z, S] (or [Z, S]) with int32
// bounds of x's shape but a last extent of 1; y has x's shape and type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferRaggedSoftMax(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1)) return ctx.error("needs inputs x and bounds");
  Dims const& x = ctx.in[0].shape;
  Dims const& b = ctx.in[1].shape;
  if (x.nbDims != 2 && x.nbDims != 3)
    return ctx.error("input must have shape [1, Z, S] or [Z, S], got ", dimsToString(x));
  if (ctx.in[1].dtype != DataType::kINT32)
    return ctx.error("bounds must be int32, got ", dataTypeName(ctx.in[1].dtype));
  bool ok = b.nbDims == x.nbDims && (b.d[b.nbDims - 1] < 0 || b.d[b.nbDims - 1] == 1);
  for (int32_t i = 0; ok && i + 1 < x.nbDims; ++i)
    if (b.d[i] >= 0 && x.d[i] >= 0 && b.d[i] != x.d[i]) ok = false;
  if (!ok)
    return ctx.error("bounds ", dimsToString(b), " must have the input's shape ", dimsToString(x),
                     " with a last extent of 1");
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kRaggedSoftMax, inferRaggedSoftMax);

}  // namespace kiln::ir
