// ai.onnx.preview.training Adagrad: one optimizer step for each (X, G, H) group, composed element-wise:
// r = R / (1 + T * decay_factor); g = norm_coefficient * X + G; H' = H + g^2; X' = X - r * g / (sqrt(H') + eps).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/optimizer_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importAdagrad(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(int n, optimizerGroups(node, 3, 2));
  KO_ASSIGN_OR_RETURN(float decay, attrFloat(node, "decay_factor", 0.0F));
  KO_ASSIGN_OR_RETURN(float eps, attrFloat(node, "epsilon", 1e-6F));
  KO_ASSIGN_OR_RETURN(float norm, attrFloat(node, "norm_coefficient", 0.0F));
  KO_ASSIGN_OR_RETURN(ITensor * r, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * one, scalar(ctx, node, r->getType(), 1));
  KO_ASSIGN_OR_RETURN(ITensor * tf, cast(ctx, node, t, r->getType()));
  KO_ASSIGN_OR_RETURN(ITensor * denom, axpb(ctx, node, static_cast<double>(decay), tf, one));
  KO_ASSIGN_OR_RETURN(ITensor * rate, elementwise(ctx, node, r, denom, ElementWiseOperation::kDIV));
  for (int i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 2 + i));
    KO_ASSIGN_OR_RETURN(ITensor * g, ctx.tensor(node, 2 + n + i));
    KO_ASSIGN_OR_RETURN(ITensor * h, ctx.tensor(node, 2 + 2 * n + i));
    KO_ASSIGN_OR_RETURN(ITensor * greg, axpb(ctx, node, static_cast<double>(norm), x, g));
    KO_ASSIGN_OR_RETURN(ITensor * g2, elementwise(ctx, node, greg, greg, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * hNew, elementwise(ctx, node, h, g2, ElementWiseOperation::kSUM));
    KO_ASSIGN_OR_RETURN(ITensor * sq, unary(ctx, node, hNew, UnaryOperation::kSQRT));
    KO_ASSIGN_OR_RETURN(ITensor * e, scalar(ctx, node, sq->getType(), static_cast<double>(eps)));
    KO_ASSIGN_OR_RETURN(ITensor * hs, elementwise(ctx, node, sq, e, ElementWiseOperation::kSUM));
    KO_ASSIGN_OR_RETURN(ITensor * rx, cast(ctx, node, rate, x->getType()));
    KO_ASSIGN_OR_RETURN(ITensor * step, elementwise(ctx, node, rx, greg, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(step, elementwise(ctx, node, step, hs, ElementWiseOperation::kDIV));
    KO_ASSIGN_OR_RETURN(ITensor * xNew, elementwise(ctx, node, x, step, ElementWiseOperation::kSUB));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, xNew));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, n + i, hNew));
  }
  return Status::success();
}

KILN_ONNX_REGISTER(kTrainingDomain, "Adagrad", importAdagrad);

}  // namespace
}  // namespace kiln::onnx
