// Shape inference of ReverseSequence: the output is the input's shape and type.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferReverseSequence(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1)) return ctx.error("needs inputs x and sequence_lens");
  TensorInfo const& x = ctx.in[0];
  TensorInfo const& lens = ctx.in[1];
  if (!isSupportedType(x.dtype)) return ctx.error("cannot copy ", dataTypeName(x.dtype));
  int32_t rank = x.shape.nbDims;
  if (rank < 2) return ctx.error("needs an input of rank >= 2, not ", rank);
  int64_t b = ctx.node.attrs.getInt("batch_axis", 1);
  int64_t s = ctx.node.attrs.getInt("sequence_axis", 0);
  if (b < -rank || b >= rank || s < -rank || s >= rank) return ctx.error("axes out of range for rank ", rank);
  if (b < 0) b += rank;
  if (s < 0) s += rank;
  if (b == s) return ctx.error("batch and sequence axes must differ");
  if (!isIntegerType(lens.dtype) || lens.shape.nbDims != 1)
    return ctx.error("sequence_lens must be a 1-D int32/int64 tensor");
  if (lens.shape.d[0] >= 0 && x.shape.d[b] >= 0 && lens.shape.d[0] != x.shape.d[b])
    return ctx.error("sequence_lens has ", lens.shape.d[0], " entries for a batch of ", x.shape.d[b]);
  ctx.out[0] = x;
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kReverseSequence, inferReverseSequence);

}  // namespace kiln::ir
