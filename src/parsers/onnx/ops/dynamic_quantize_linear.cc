// ONNX importer: DynamicQuantizeLinear.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/quantize_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace quantize_ops_detail;  // NOLINT(google-build-using-namespace)

Result<ITensor*> floatScalar(ImportContext& ctx, Node const& node, float v, char const* tag) {
  KO_ASSIGN_OR_RETURN(Constant * c, ctx.newConstant(DataType::kFLOAT, Dims{0, {}}));
  std::memcpy(c->bytes.data(), &v, sizeof(v));
  return ctx.constantTensor(c, node.name() + tag);
}

Result<ITensor*> ew(ImportContext& ctx, Node const& node, ITensor* a, ITensor* b, ElementWiseOperation op) {
  IElementWiseLayer* l = ctx.network().addElementWise(*a, *b, op);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "elementwise"));
  return l->getOutput(0);
}

/// DynamicQuantizeLinear: scale = (max(0, max x) - min(0, min x)) / 255, zero point = clamp(round(-min / scale),
/// 0, 255), y = saturate(round(x / scale) + zero point), all uint8.
Status importDynamicQuantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  if (x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT input only");
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  uint32_t const all = r == 0 ? 0U : (r >= 32 ? ~0U : ((1U << static_cast<uint32_t>(r)) - 1U));
  IReduceLayer* mx = ctx.network().addReduce(*x, ReduceOperation::kMAX, all, false);
  KO_RETURN_IF_ERROR(ctx.check(mx, node, "max"));
  IReduceLayer* mn = ctx.network().addReduce(*x, ReduceOperation::kMIN, all, false);
  KO_RETURN_IF_ERROR(ctx.check(mn, node, "min"));
  KO_ASSIGN_OR_RETURN(ITensor * zero, floatScalar(ctx, node, 0.0F, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * qmax, floatScalar(ctx, node, 255.0F, "_qmax"));
  KO_ASSIGN_OR_RETURN(ITensor * hi, ew(ctx, node, mx->getOutput(0), zero, ElementWiseOperation::kMAX));
  KO_ASSIGN_OR_RETURN(ITensor * lo, ew(ctx, node, mn->getOutput(0), zero, ElementWiseOperation::kMIN));
  KO_ASSIGN_OR_RETURN(ITensor * range, ew(ctx, node, hi, lo, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ew(ctx, node, range, qmax, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * q, ew(ctx, node, zero, lo, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, q, scale, ElementWiseOperation::kDIV));
  IUnaryLayer* rnd = ctx.network().addUnary(*q, UnaryOperation::kROUND);
  KO_RETURN_IF_ERROR(ctx.check(rnd, node, "round"));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, rnd->getOutput(0), zero, ElementWiseOperation::kMAX));
  KO_ASSIGN_OR_RETURN(q, ew(ctx, node, q, qmax, ElementWiseOperation::kMIN));
  ICastLayer* zp = ctx.network().addCast(*q, DataType::kUINT8);
  KO_RETURN_IF_ERROR(ctx.check(zp, node, "zero_point"));
  IQuantizeLayer* l = ctx.network().addQuantize(*x, *scale, DataType::kUINT8);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "quantize"));
  l->setInput(2, *zp->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, l->getOutput(0)));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    IIdentityLayer* id = ctx.network().addIdentity(*scale);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "scale"));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, id->getOutput(0)));
  }
  if (node.output_size() > 2 && !node.output(2).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2, zp->getOutput(0)));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "DynamicQuantizeLinear", importDynamicQuantizeLinear);

}  // namespace
}  // namespace kiln::onnx
