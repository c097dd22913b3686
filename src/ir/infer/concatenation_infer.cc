// Shape inference of Concatenation: inputs of one type and rank, equal dims but along `axis` (negative counts
// from the back), where the output dim is the sum.
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferConcatenation(InferContext& ctx) {
  if (ctx.numInputs() < 1)
    return ctx.error("needs at least one input");
  for (size_t i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.present(i))
      return ctx.error("input ", i, " is missing");
  DataType dtype = ctx.in[0].dtype;
  Dims out = ctx.in[0].shape;
  if (out.nbDims < 1)
    return ctx.error("cannot concatenate rank-0 tensors");
  Result<int32_t> axis = normalizeAxis(ctx.node.attrs.getInt("axis", 0), out.nbDims);
  if (!axis.isOk())
    return ctx.error(axis.status().message());
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    TensorInfo const& t = ctx.in[i];
    if (t.dtype != dtype)
      return ctx.error("input ", i, " is ", dataTypeName(t.dtype), " but input 0 is ", dataTypeName(dtype));
    if (t.shape.nbDims != out.nbDims)
      return ctx.error("input ", i, " has rank ", t.shape.nbDims, " but input 0 has rank ", out.nbDims);
    for (int32_t d = 0; d < out.nbDims; ++d) {
      int64_t v = t.shape.d[d];
      if (d == *axis) {
        out.d[d] = (out.d[d] < 0 || v < 0) ? -1 : out.d[d] + v;
      } else if (out.d[d] < 0) {
        out.d[d] = v;  // unknown against known: must match at run time
      } else if (v >= 0 && v != out.d[d]) {
        return ctx.error("input ", i, " has shape ", dimsToString(t.shape), ", which differs from ",
                         dimsToString(ctx.in[0].shape), " outside axis ", *axis);
      }
    }
  }
  ctx.out[0] = {dtype, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kConcatenation, inferConcatenation);

}  // namespace kiln::ir
