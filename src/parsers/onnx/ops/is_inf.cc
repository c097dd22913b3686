// ONNX IsInf (opsets 10, 20): true where x is infinite, optionally only +inf (detect_negative = 0) or only -inf
// (detect_positive = 0); any float input type (float16, bfloat16, float, double), as opset 20 allows.
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importIsInf(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t neg, attrInt(node, "detect_negative", 1));
  KO_ASSIGN_OR_RETURN(int64_t pos, attrInt(node, "detect_positive", 1));
  KO_ASSIGN_OR_RETURN(ITensor * y, unary(ctx, node, x, UnaryOperation::kISINF));
  if (neg == 0 || pos == 0) {
    ITensor* side = nullptr;
    if (neg == 0 && pos == 0) {
      KO_ASSIGN_OR_RETURN(side, elementwise(ctx, node, x, x, ElementWiseOperation::kLESS));  // always false
    } else {
      KO_ASSIGN_OR_RETURN(ITensor * zero, scalar(ctx, node, x->getType(), 0.0));
      KO_ASSIGN_OR_RETURN(side, elementwise(ctx, node, x, zero,
                                            pos != 0 ? ElementWiseOperation::kGREATER : ElementWiseOperation::kLESS));
    }
    KO_ASSIGN_OR_RETURN(y, elementwise(ctx, node, y, side, ElementWiseOperation::kAND));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "IsInf", importIsInf);

}  // namespace
}  // namespace kiln::onnx
