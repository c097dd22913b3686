// ONNX NegativeLogLikelihoodLoss (opset 12/13): the loss of log-probabilities against integer targets, with an
// optional class weight, ignore_index and none/sum/mean reduction (composition in loss_util.cc).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/loss_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importNegativeLogLikelihoodLoss(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 2 || node.input_size() > 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 or 3 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(LossAttributes attrs, lossAttributes(node));
  KO_ASSIGN_OR_RETURN(ITensor * input, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * target, ctx.tensor(node, 1));
  ITensor* weight = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(weight, ctx.tensor(node, 2));
  }
  KO_ASSIGN_OR_RETURN(ITensor * loss, negativeLogLikelihood(ctx, node, input, target, weight, attrs));
  return ctx.setOutput(node, 0, loss);
}

KILN_ONNX_REGISTER("", "NegativeLogLikelihoodLoss", importNegativeLogLikelihoodLoss);

}  // namespace
}  // namespace kiln::onnx
