// ONNX Clip: bounds from attributes (opset < 11) or inputs 1/2 (a missing bound is unbounded). Constant bounds on
// a float input make one kCLIP activation; run-time bounds, and integer inputs, become element-wise max/min.
#include <limits>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

Status clipActivation(ImportContext& ctx, Node const& node, ITensor* x, float lo, float hi) {
  IActivationLayer* l = ctx.network().addActivation(*x, ActivationType::kCLIP);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "clip"));
  l->setAlpha(lo);
  l->setBeta(hi);
  return ctx.setOutput(node, 0, l->getOutput(0));
}

Status importClip(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  if (ctx.opset() < 11) {
    KO_ASSIGN_OR_RETURN(lo, attrFloat(node, "min", lo));
    KO_ASSIGN_OR_RETURN(hi, attrFloat(node, "max", hi));
    return clipActivation(ctx, node, x, lo, hi);
  }
  bool allConstant = true;
  for (int i = 1; i <= 2; ++i) {
    if (!ImportContext::hasInput(node, i)) {
      continue;
    }
    Constant const* c = ctx.constant(node, i);
    if (c != nullptr && c->count() != 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "bound input ", i, " has ", c->count(),
                                      " values, not 1");
    }
    if (c == nullptr) {
      allConstant = false;
    } else {
      (i == 1 ? lo : hi) = static_cast<float>(c->asDouble(0));
    }
  }
  if (allConstant && isFloatType(x->getType())) {
    return clipActivation(ctx, node, x, lo, hi);
  }
  ITensor* y = x;
  for (int i = 1; i <= 2; ++i) {
    if (!ImportContext::hasInput(node, i)) {
      continue;
    }
    KO_ASSIGN_OR_RETURN(ITensor * bound, ctx.tensor(node, i));
    KO_ASSIGN_OR_RETURN(
        y, elementwise(ctx, node, y, bound, i == 1 ? ElementWiseOperation::kMAX : ElementWiseOperation::kMIN));
  }
  if (y == x) {
    IIdentityLayer* id = ctx.network().addIdentity(*x);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "identity"));
    y = id->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Clip", importClip);

}  // namespace
}  // namespace kiln::onnx
