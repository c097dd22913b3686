// ONNX InstanceNormalization: a normalization layer over the spatial axes [2, rank) with per-channel scale and
// bias.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importInstanceNormalization(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-5F));
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, x));
  if (rank < 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", rank, " is below 3");
  }
  KO_ASSIGN_OR_RETURN(ITensor * scaleIn, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * scale, perChannelView(ctx, node, scaleIn, rank));
  KO_ASSIGN_OR_RETURN(ITensor * biasIn, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(ITensor * bias, perChannelView(ctx, node, biasIn, rank));
  uint32_t axes = 0;
  for (int32_t i = 2; i < rank; ++i) {
    axes |= 1U << static_cast<uint32_t>(i);
  }
  INormalizationLayer* l = ctx.network().addNormalization(*x, *scale, *bias, axes);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "instancenorm"));
  l->setEpsilon(eps);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "InstanceNormalization", importInstanceNormalization);

}  // namespace
}  // namespace kiln::onnx
