// Shape inference of NonZero: [rank(x), count], count known at run time.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferNonZero(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  if (ctx.out.size() != 1) return ctx.error("needs one output");
  if (!isSupportedType(ctx.in[0].dtype)) return ctx.error("cannot read ", dataTypeName(ctx.in[0].dtype));
  auto it = static_cast<DataType>(ctx.node.attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  if (it != DataType::kINT32 && it != DataType::kINT64)
    return ctx.error("indices type must be int32 or int64, not ", dataTypeName(it));
  int64_t rank = ctx.in[0].shape.nbDims;
  // A known-empty input has no non-zero elements.
  int64_t count = dimsKnown(ctx.in[0].shape) && volume(ctx.in[0].shape) == 0 ? 0 : -1;
  ctx.out[0] = {it, makeDims({rank, count})};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kNonZero, inferNonZero);

}  // namespace kiln::ir
