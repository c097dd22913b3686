// The negative log-likelihood loss shared by the NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// importers (see loss_util.h).
#include "parsers/onnx/ops/loss_util.h"

#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {

Result<LossAttributes> lossAttributes(::onnx::NodeProto const& node) {
  LossAttributes a;
  KO_ASSIGN_OR_RETURN(a.reduction, attrString(node, "reduction", "mean"));
  if (a.reduction != "none" && a.reduction != "sum" && a.reduction != "mean") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "reduction '", a.reduction,
                                    "' is not 'none', 'sum' or 'mean'");
  }
  a.hasIgnoreIndex = findAttr(node, "ignore_index") != nullptr;
  KO_ASSIGN_OR_RETURN(a.ignoreIndex, attrInt(node, "ignore_index", 0));
  return a;
}

Result<ITensor*> negativeLogLikelihood(ImportContext& ctx, ::onnx::NodeProto const& node, ITensor* input,
                                       ITensor* target, ITensor* weight, LossAttributes const& attrs) {
  KO_ASSIGN_OR_RETURN(int32_t rank, rankOf(node, input));
  KO_ASSIGN_OR_RETURN(int32_t targetRank, rankOf(node, target));
  if (rank < 2 || targetRank != rank - 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input rank ", rank, " and target rank ",
                                    targetRank, " do not fit [N, C, d...] and [N, d...]");
  }
  DataType const tt = target->getType();
  if (tt != DataType::kINT32 && tt != DataType::kINT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "target must be int32 or int64");
  }
  DataType const ft = input->getType();
  // Ignored targets may lie outside [0, C) (e.g. -1 or C): they index class 0 instead, and their loss and
  // weight are replaced by 0 afterwards.
  ITensor* ignored = nullptr;
  ITensor* index = target;
  if (attrs.hasIgnoreIndex) {
    KO_ASSIGN_OR_RETURN(ITensor * ii, scalar(ctx, node, tt, static_cast<double>(attrs.ignoreIndex)));
    KO_ASSIGN_OR_RETURN(ignored, elementwise(ctx, node, target, ii, ElementWiseOperation::kEQUAL));
    KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, tt, 0));
    KO_ASSIGN_OR_RETURN(index, select(ctx, node, ignored, zero, target));
  }
  // -input[n, index[n, d...], d...]: a GatherElements along axis 1 with the index unsqueezed there.
  KO_ASSIGN_OR_RETURN(ITensor * axis1, ctx.int64Tensor({1}, node.name() + "_class_axis"));
  IUnsqueezeLayer* un = ctx.network().addUnsqueeze(*index, *axis1);
  KO_RETURN_IF_ERROR(ctx.check(un, node, "target_unsqueeze"));
  IGatherLayer* g = ctx.network().addGatherV2(*input, *un->getOutput(0), GatherMode::kELEMENT);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "gather_elements"));
  g->setGatherAxis(1);
  ISqueezeLayer* sq = ctx.network().addSqueeze(*g->getOutput(0), *axis1);
  KO_RETURN_IF_ERROR(ctx.check(sq, node, "picked_squeeze"));
  KO_ASSIGN_OR_RETURN(ITensor * loss, unary(ctx, node, sq->getOutput(0), UnaryOperation::kNEG));

  ITensor* applied = nullptr;  // per-element weight, when not all ones
  if (weight != nullptr) {
    IGatherLayer* wg = ctx.network().addGather(*weight, *index, 0);
    KO_RETURN_IF_ERROR(ctx.check(wg, node, "weight_gather"));
    applied = wg->getOutput(0);
  }
  if (ignored != nullptr) {
    KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, ft, 0));
    if (applied == nullptr) {
      KO_ASSIGN_OR_RETURN(applied, scalar(ctx, node, ft, 1));
    }
    KO_ASSIGN_OR_RETURN(applied, select(ctx, node, ignored, zero, applied));
  }
  if (applied != nullptr) {
    KO_ASSIGN_OR_RETURN(loss, elementwise(ctx, node, loss, applied, ElementWiseOperation::kPROD));
  }
  if (attrs.reduction == "none") {
    return loss;
  }
  uint32_t const all = allAxes(targetRank);
  if (attrs.reduction == "sum") {
    return reduce(ctx, node, loss, ReduceOperation::kSUM, all, false);
  }
  if (applied == nullptr) {
    return reduce(ctx, node, loss, ReduceOperation::kAVG, all, false);
  }
  KO_ASSIGN_OR_RETURN(ITensor * total, reduce(ctx, node, loss, ReduceOperation::kSUM, all, false));
  KO_ASSIGN_OR_RETURN(ITensor * weightSum, reduce(ctx, node, applied, ReduceOperation::kSUM, all, false));
  return elementwise(ctx, node, total, weightSum, ElementWiseOperation::kDIV);
}

}  // namespace kiln::onnx
