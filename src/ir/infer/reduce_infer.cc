// Shape inference of Reduce (TensorRT's IReduceLayer): reduced axes become 1 (keep_dims) or are removed. The axes
// come from the attribute or from input 1 (a 1-D shape tensor, Kiln extension); while its contents are unknown
// the output rank follows from its length and every dim is -1.
#include <vector>

#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferReduce(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 2 || !ctx.present(0))
    return ctx.error("needs input x and an optional axes input");
  Dims const& x = ctx.in[0].shape;
  int64_t op = ctx.node.attrs.getInt("op", 0);
  if (op < 0 || op >= EnumMax<ReduceOperation>())
    return ctx.error("unknown reduce op ", op);
  bool keep = ctx.node.attrs.getInt("keep_dims", 0) != 0;
  std::vector<int64_t> axes;
  if (ctx.present(1)) {
    TensorInfo const& a = ctx.in[1];
    if (a.dtype != DataType::kINT32 && a.dtype != DataType::kINT64)
      return ctx.error("axes must be int32 or int64, not ", dataTypeName(a.dtype));
    if (a.shape.nbDims != 1)
      return ctx.error("axes must be 1-D, not ", dimsToString(a.shape));
    if (!ctx.inValues[1]) {
      // Which axes is only known while running.
      int64_t n = a.shape.d[0];
      if (!keep && (n < 0 || n > x.nbDims))
        return ctx.error("the number of axes must be known at build time (between 0 and ", x.nbDims, "), not ",
                         dimsToString(a.shape));
      Dims y{};
      y.nbDims = keep ? x.nbDims : x.nbDims - static_cast<int32_t>(n);
      for (int32_t i = 0; i < y.nbDims; ++i)
        y.d[i] = -1;
      ctx.out[0] = {ctx.in[0].dtype, y};
      return Status::ok();
    }
    axes = ctx.inValues[1]->toInt64Vector();
  } else {
    axes = ctx.node.attrs.getInts("axes");
  }
  std::vector<bool> reduced(static_cast<size_t>(x.nbDims), false);
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, x.nbDims);
    if (!axis)
      return ctx.error("axis ", a, " is out of range for ", dimsToString(x));
    if (reduced[*axis])
      return ctx.error("axis ", a, " is listed twice");
    reduced[*axis] = true;
  }
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
