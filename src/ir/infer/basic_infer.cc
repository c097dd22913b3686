// Shape inference of Constant, Identity, Cast, Reformat and Shape.
#include "core/tensor_format.h"
#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferConstant(InferContext& ctx) {
  if (!ctx.node.constant) return ctx.error("has no data");
  ctx.out[0] = {ctx.node.constant->dtype(), ctx.node.constant->shape()};
  return Status::ok();
}

Status inferIdentity(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

Status inferCast(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  auto to = static_cast<DataType>(ctx.node.attrs.getInt("to", static_cast<int64_t>(DataType::kFLOAT)));
  if (!isSupportedType(to)) return ctx.error("cannot cast to ", dataTypeName(to));
  ctx.out[0] = {to, ctx.in[0].shape};
  return Status::ok();
}

Status inferReformat(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  for (char const* a : {"from", "to"}) {
    auto f = static_cast<TensorFormat>(ctx.node.attrs.getInt(a, 0));
    auto l = formatLayout(f, ctx.in[0].shape.nbDims);
    if (!l) return ctx.error("cannot reformat ", a, " format ", static_cast<int>(f), ": ", l.status().message());
  }
  ctx.out[0] = ctx.in[0];
  if (ctx.node.attrs.has("dtype")) {
    // A converting Reformat (a Cast folded into it by the builder): float types only, rounding as Cast does.
    auto to = static_cast<DataType>(ctx.node.attrs.getInt("dtype", 0));
    auto isFloat = [](DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; };
    if (to != ctx.in[0].dtype && (!isFloat(to) || !isFloat(ctx.in[0].dtype)))
      return ctx.error("converts between float32, float16 and bfloat16 only, not ", dataTypeName(ctx.in[0].dtype),
                       " to ", dataTypeName(to));
    ctx.out[0].dtype = to;
  }
  return Status::ok();
}

Status inferShape(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0)) return ctx.error("needs exactly one input");
  Dims const& s = ctx.in[0].shape;
  ctx.out[0] = {DataType::kINT64, makeDims({s.nbDims})};
  if (dimsKnown(s)) {
    KILN_ASSIGN_OR_RETURN(ctx.outValues[0], HostTensor::make(DataType::kINT64, makeDims({s.nbDims}), dimsToVector(s)));
  }
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kConstant, inferConstant);
KILN_REGISTER_INFER(kIdentity, inferIdentity);
KILN_REGISTER_INFER(kCast, inferCast);
KILN_REGISTER_INFER(kShape, inferShape);
KILN_REGISTER_INFER(kReformat, inferReformat);

}  // namespace kiln::ir
