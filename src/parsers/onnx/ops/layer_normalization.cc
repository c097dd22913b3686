// ONNX LayerNormalization (opset 17): normalization over axes [axis, rank). Y alone maps onto one
// normalization layer; when the Mean/InvStdDev outputs are wanted the whole op is composed from reduce and
// element-wise layers in the stash type, so that the statistics can be returned.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool wanted(Node const& node, int i) { return node.output_size() > i && !node.output(i).empty(); }

/// Y, Mean and InvStdDev composed: mean and variance over `axes` (kept as 1-dims) computed in `stash`.
Status composedLayerNorm(ImportContext& ctx, Node const& node, ITensor* x, ITensor* scale, ITensor* bias, uint32_t axes,
                         float eps, DataType stash) {
  KO_ASSIGN_OR_RETURN(ITensor * xs, cast(ctx, node, x, stash));
  KO_ASSIGN_OR_RETURN(ITensor * mean, reduce(ctx, node, xs, ReduceOperation::kAVG, axes, true));
  KO_ASSIGN_OR_RETURN(ITensor * d, elementwise(ctx, node, xs, mean, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * d2, elementwise(ctx, node, d, d, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * var, reduce(ctx, node, d2, ReduceOperation::kAVG, axes, true));
  KO_ASSIGN_OR_RETURN(ITensor * e, scalar(ctx, node, stash, static_cast<double>(eps)));
  KO_ASSIGN_OR_RETURN(ITensor * ve, elementwise(ctx, node, var, e, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * sd, unary(ctx, node, ve, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * inv, unary(ctx, node, sd, UnaryOperation::kRECIP));
  KO_ASSIGN_OR_RETURN(ITensor * n, elementwise(ctx, node, d, inv, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(n, cast(ctx, node, n, x->getType()));
  KO_ASSIGN_OR_RETURN(ITensor * y, elementwise(ctx, node, n, scale, ElementWiseOperation::kPROD));
  if (bias != nullptr) {
    KO_ASSIGN_OR_RETURN(y, elementwise(ctx, node, y, bias, ElementWiseOperation::kSUM));
  }
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, y));
  if (wanted(node, 1)) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, mean));
  }
  if (wanted(node, 2)) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2, inv));
  }
  return Status::success();
}

Status importLayerNormalization(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 2 || node.input_size() > 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 or 3 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", -1));
  KO_ASSIGN_OR_RETURN(int64_t stashAttr, attrInt(node, "stash_type", ::onnx::TensorProto::FLOAT));
  auto stash = fromOnnxType(static_cast<int32_t>(stashAttr));
  if (!stash.ok()) {
    return ImportContext::nodeError(stash.status.code, node, "stash_type: ", stash.status.message);
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, rank));
  uint32_t axes = 0;
  for (int32_t i = axis; i < rank; ++i) {
    axes |= 1U << static_cast<uint32_t>(i);
  }
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(scale, broadcastToRank(ctx, node, scale, rank));
  ITensor* bias = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(bias, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(bias, broadcastToRank(ctx, node, bias, rank));
  }
  if (wanted(node, 1) || wanted(node, 2)) {
    return composedLayerNorm(ctx, node, x, scale, bias, axes, eps, stash.value);
  }
  if (bias == nullptr) {
    KO_ASSIGN_OR_RETURN(Constant * zero, ctx.newConstant(scale->getType(), Dims{0, {}}));
    KO_ASSIGN_OR_RETURN(bias, ctx.constantTensor(zero, node.name() + "_zero_bias"));
    KO_ASSIGN_OR_RETURN(bias, broadcastToRank(ctx, node, bias, rank));
  }
  INormalizationLayer* l = ctx.network().addNormalization(*x, *scale, *bias, axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "layernorm"));
  l->setEpsilon(eps);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "LayerNormalization", importLayerNormalization);

}  // namespace
}  // namespace kiln::onnx
