// ai.onnx.preview.training Momentum: one step for each (X, G, V) group, composed element-wise:
// g = norm_coefficient * X + G; V' = alpha V + (T > 0 ? beta : 1) g; X' = X - R V' ("standard") or
// X' = X - R (g + alpha V') ("nesterov").
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/optimizer_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importMomentum(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(int n, optimizerGroups(node, 3, 2));
  for (char const* required : {"alpha", "beta", "mode", "norm_coefficient"}) {
    if (findAttr(node, required) == nullptr) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute '", required, "' is required");
    }
  }
  KO_ASSIGN_OR_RETURN(float alpha, attrFloat(node, "alpha", 0.0F));
  KO_ASSIGN_OR_RETURN(float beta, attrFloat(node, "beta", 0.0F));
  KO_ASSIGN_OR_RETURN(float norm, attrFloat(node, "norm_coefficient", 0.0F));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "standard"));
  if (mode != "standard" && mode != "nesterov") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "mode '", mode,
                                    "' is not 'standard' or 'nesterov'");
  }
  auto const a = static_cast<double>(alpha);
  KO_ASSIGN_OR_RETURN(ITensor * r, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * positive, stepPositive(ctx, node));
  for (int i = 0; i < n; ++i) {
    KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 2 + i));
    KO_ASSIGN_OR_RETURN(ITensor * g, ctx.tensor(node, 2 + n + i));
    KO_ASSIGN_OR_RETURN(ITensor * v, ctx.tensor(node, 2 + 2 * n + i));
    DataType const ft = x->getType();
    KO_ASSIGN_OR_RETURN(ITensor * bt, scalar(ctx, node, ft, static_cast<double>(beta)));
    KO_ASSIGN_OR_RETURN(ITensor * one, scalar(ctx, node, ft, 1));
    KO_ASSIGN_OR_RETURN(ITensor * gainB, select(ctx, node, positive, bt, one));
    KO_ASSIGN_OR_RETURN(ITensor * greg, axpb(ctx, node, static_cast<double>(norm), x, g));
    KO_ASSIGN_OR_RETURN(ITensor * gPart, elementwise(ctx, node, gainB, greg, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * vNew, axpb(ctx, node, a, v, gPart));
    ITensor* dir = vNew;
    if (mode == "nesterov") {
      KO_ASSIGN_OR_RETURN(dir, axpb(ctx, node, a, vNew, greg));
    }
    KO_ASSIGN_OR_RETURN(ITensor * rx, cast(ctx, node, r, ft));
    KO_ASSIGN_OR_RETURN(ITensor * step, elementwise(ctx, node, rx, dir, ElementWiseOperation::kPROD));
    KO_ASSIGN_OR_RETURN(ITensor * xNew, elementwise(ctx, node, x, step, ElementWiseOperation::kSUB));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, i, xNew));
    KO_RETURN_IF_ERROR(ctx.setOutput(node, n + i, vNew));
  }
  return Status::success();
}

KILN_ONNX_REGISTER(kTrainingDomain, "Momentum", importMomentum);

}  // namespace
}  // namespace kiln::onnx
