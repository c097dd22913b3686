// Shape inference of Reduce (TensorRT's IReduceLayer): reduced axes become 1 (keep_dims) or are removed.
#include <vector>

#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferReduce(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0))
    return ctx.error("needs exactly one input");
  Dims const& x = ctx.in[0].shape;
  int64_t op = ctx.node.attrs.getInt("op", 0);
  if (op < 0 || op >= EnumMax<ReduceOperation>())
    return ctx.error("unknown reduce op ", op);
  std::vector<bool> reduced(static_cast<size_t>(x.nbDims), false);
  for (int64_t a : ctx.node.attrs.getInts("axes")) {
    auto axis = normalizeAxis(a, x.nbDims);
    if (!axis)
      return ctx.error("axis ", a, " is out of range for ", dimsToString(x));
    if (reduced[*axis])
      return ctx.error("axis ", a, " is listed twice");
    reduced[*axis] = true;
  }
  bool keep = ctx.node.attrs.getInt("keep_dims", 0) != 0;
  Dims y{};
  y.nbDims = 0;
  for (int32_t i = 0; i < x.nbDims; ++i) {
    if (!reduced[i])
      y.d[y.nbDims++] = x.d[i];
    else if (keep)
      y.d[y.nbDims++] = 1;
  }
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kReduce, inferReduce);

}  // namespace kiln::ir
