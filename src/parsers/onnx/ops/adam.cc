// ai.onnx.preview.training Adam: one optimizer step for each (X, G, V, H) group, composed element-wise:
// g = norm_coefficient * X + G; V' = alpha V + (1 - alpha) g; H' = beta H + (1 - beta) g^2;
// r = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R; X' = (1 - norm_coefficient_post)(X - r V' / (sqrt(H') + eps)).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/optimizer_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importAdam(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(int n, optimizerGroups(node, 4, 3));
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.9F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.999F));
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-6F));
  KO_ASSIGN_OR_RETURN(float norm, attrFloat(node, "norm_coefficient", 0.0F));
  KO_ASSIGN_OR_RETURN(float post, attrFloat(node, "norm_coefficient_post", 0.0F));
  auto const a = static_cast<double>(alpha);
  auto const b = static_cast<double>(beta);
  KO_ASSIGN_OR_RETURN(ITensor * r, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, 1));
  DataType const ft = r->getType();
  // Bias-corrected rate; at T = 0 the correction divides by zero but is not selected.
  KO_ASSIGN_OR_RETURN(ITensor * tf, cast(ctx, node, t, ft));
  KO_ASSIGN_OR_RETURN(ITensor * at, scalar(ctx, node, ft, a));
  KO_ASSIGN_OR_RETURN(ITensor * bt, scalar(ctx, node, ft, b));
  KO_ASSIGN_OR_RETURN(ITensor * one, scalar(ctx, node, ft, 1));
  KO_ASSIGN_OR_RETURN(ITensor * aPow, elementwise(ctx, node, at, tf, ElementWiseOperation::kPOW));
  KO_ASSIGN_OR_RETURN(ITensor * bPow, elementwise(ctx, node, bt, tf, ElementWiseOperation::kPOW));
  KO_ASSIGN_OR_RETURN(ITensor * aCorr, elementwise(ctx, node, one, aPow, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * bCorr, elementwise(ctx, node, one, bPow, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(bCorr, unary(ctx, node, bCorr, UnaryOperation::kSQRT));
  KO_ASSIGN_OR_RETURN(ITensor * corrected, elementwise(ctx, node, r, bCorr, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(corrected, elementwise(ctx, node, corrected, aCorr, ElementWiseOperation::kDIV));
  KO_ASSIGN_OR_RETURN(ITensor * positive, stepPositive(ctx, node));
  KO_ASSIGN_OR_RETURN(ITensor * rate, select(ctx, node, positive, corrected, r));
  for (int i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 2 + i));
    KO_ASSIGN_OR_RETURN(ITensor * g, ctx.tensor(node, 2 + n + i));
    KO_ASSIGN_OR_RETURN(ITensor * v, ctx.tensor(node, 2 + 2 * n + i));
    KO_ASSIGN_OR_RETURN(ITensor * h, ctx.tensor(node, 2 + 3 * n + i));
    KO_ASSIGN_OR_RETURN(ITensor * greg, axpb(ctx, node, static_cast<double>(norm), x, g));
    KO_ASSIGN_OR_RETURN(ITensor * vPart, axpb(ctx, node, 1.0 - a, greg, nullptr));
    KO_ASSIGN_OR_RETURN(ITensor * vNew, axpb(ctx, node, a, v, vPart));
    KO_ASSIGN_OR_RETURN(ITensor * g2, elementwise(ctx, node, greg, greg, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * hPart, axpb(ctx, node, 1.0 - b, g2, nullptr));
    KO_ASSIGN_OR_RETURN(ITensor * hNew, axpb(ctx, node, b, h, hPart));
    KO_ASSIGN_OR_RETURN(ITensor * sq, unary(ctx, node, hNew, UnaryOperation::kSQRT));
    KO_ASSIGN_OR_RETURN(ITensor * e, scalar(ctx, node, sq->getType(), static_cast<double>(eps)));
    KO_ASSIGN_OR_RETURN(ITensor * hs, elementwise(ctx, node, sq, e, ElementWiseOperation::kSUM));
    KO_ASSIGN_OR_RETURN(ITensor * ratio, elementwise(ctx, node, vNew, hs, ElementWiseOperation::kDIV));
    KO_ASSIGN_OR_RETURN(ITensor * rx, cast(ctx, node, rate, x->getType()));
    KO_ASSIGN_OR_RETURN(ITensor * step, elementwise(ctx, node, rx, ratio, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * xNew, elementwise(ctx, node, x, step, ElementWiseOperation::kSUB));
    KO_ASSIGN_OR_RETURN(xNew, axpb(ctx, node, 1.0 - static_cast<double>(post), xNew, nullptr));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, xNew));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, n + i, vNew));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, 2 * n + i, hNew));
  }
  return Status::success();
}

KILN_ONNX_REGISTER(kTrainingDomain, "Adam", importAdam);

}  // namespace
}  // namespace kiln::onnx
