// Shape inference of Fill: the shape comes from the dims attribute or input 0 (a 1-D shape tensor); the type
// from the `to` attribute.
#include "ir/shape_inference.h"

#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferFill(InferContext& ctx) {
  if (ctx.numInputs() > 3) return ctx.error("takes at most 3 inputs (shape, alpha, beta)");
  if (ctx.out.size() != 1) return ctx.error("needs one output");
  auto op = ctx.node.attrs.getInt("op", 0);
  if (op < 0 || op >= EnumMax<FillOperation>()) return ctx.error("unknown fill operation ", op);
  auto to = static_cast<DataType>(ctx.node.attrs.getInt("to", static_cast<int64_t>(DataType::kFLOAT)));
  if (to == DataType::kBOOL || !isSupportedType(to)) return ctx.error("cannot fill ", dataTypeName(to), " tensors");
  if (op != static_cast<int64_t>(FillOperation::kLINSPACE) && !isFloatType(to))
    return ctx.error("random fills of ", dataTypeName(to), " tensors are not supported yet (use a float type)");
  Dims out{};
  if (ctx.present(0)) {
    TensorInfo const& s = ctx.in[0];
    if (!isIntegerType(s.dtype) || s.shape.nbDims != 1) return ctx.error("shape must be a 1-D int32/int64 tensor");
    if (ctx.inValues[0]) {
      std::vector<int64_t> d = ctx.inValues[0]->toInt64Vector();
      if (static_cast<int64_t>(d.size()) > Dims::MAX_DIMS) return ctx.error("too many output dimensions");
      for (int64_t v : d)
        if (v < 0) return ctx.error("output dimensions must be >= 0, not ", dimsToString(makeDims(d)));
      out = makeDims(d);
    } else if (s.shape.d[0] >= 0) {
      if (s.shape.d[0] > Dims::MAX_DIMS) return ctx.error("too many output dimensions");
      out.nbDims = static_cast<int32_t>(s.shape.d[0]);
      for (int32_t i = 0; i < out.nbDims; ++i) out.d[i] = -1;
    } else {
      return ctx.error("the length of the shape input must be known");
    }
  } else {
    if (!ctx.node.attrs.has("dims")) return ctx.error("needs the dims attribute or a shape input");
    std::vector<int64_t> d = ctx.node.attrs.getInts("dims");
    if (static_cast<int64_t>(d.size()) > Dims::MAX_DIMS) return ctx.error("too many output dimensions");
    for (int64_t v : d)
      if (v < 0) return ctx.error("output dimensions must be >= 0, not ", dimsToString(makeDims(d)));
    out = makeDims(d);
  }
  if (ctx.present(1) && (ctx.in[1].shape.nbDims != 0 || !isSupportedType(ctx.in[1].dtype)))
    return ctx.error("alpha must be a 0-D tensor");
  if (ctx.present(2)) {
    Dims const& b = ctx.in[2].shape;
    bool perAxis = op == static_cast<int64_t>(FillOperation::kLINSPACE) && b.nbDims == 1;
    if (b.nbDims != 0 && !perAxis) return ctx.error("beta must be a 0-D tensor (or 1-D for kLINSPACE)");
    if (perAxis && b.d[0] >= 0 && b.d[0] != out.nbDims)
      return ctx.error("beta has ", b.d[0], " steps for an output of rank ", out.nbDims);
  }
  ctx.out[0] = {to, out};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kFill, inferFill);

}  // namespace kiln::ir
