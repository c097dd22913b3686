// ONNX SoftmaxCrossEntropyLoss (opset 12/13): log-softmax over the class axis 1 (max-shifted, so large logits do
// not overflow) followed by the negative log-likelihood loss; the optional second output is the log-softmax.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/loss_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importSoftmaxCrossEntropyLoss(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 2 || node.input_size() > 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 or 3 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(LossAttributes attrs, lossAttributes(node));
  KO_ASSIGN_OR_RETURN(ITensor * scores, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * target, ctx.tensor(node, 1));
  ITensor* weight = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(weight, ctx.tensor(node, 2));
  }
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, scores));
  if (rank < 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scores rank ", rank, " is below 2");
  }
  // log_softmax(x) = (x - max) - log(sum(exp(x - max))) over axis 1.
  uint32_t const classAxis = 1U << 1U;
  KO_ASSIGN_OR_RETURN(ITensor * peak, reduce(ctx, node, scores, ReduceOperation::kMAX, classAxis, true));
  KO_ASSIGN_OR_RETURN(ITensor * shifted, elementwise(ctx, node, scores, peak, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * e, unary(ctx, node, shifted, UnaryOperation::kEXP));
  KO_ASSIGN_OR_RETURN(ITensor * sum, reduce(ctx, node, e, ReduceOperation::kSUM, classAxis, true));
  KO_ASSIGN_OR_RETURN(ITensor * logSum, unary(ctx, node, sum, UnaryOperation::kLOG));
  KO_ASSIGN_OR_RETURN(ITensor * logProb, elementwise(ctx, node, shifted, logSum, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * loss, negativeLogLikelihood(ctx, node, logProb, target, weight, attrs));
  KO_RETURN_IF_ERROR(ctx.setOutput(node, 0, loss));
  if (node.output_size() > 1 && !node.output(1).empty()) {
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 1, logProb));
  }
  return Status::success();
}

KILN_ONNX_REGISTER("", "SoftmaxCrossEntropyLoss", importSoftmaxCrossEntropyLoss);

}  // namespace
}  // namespace kiln::onnx
