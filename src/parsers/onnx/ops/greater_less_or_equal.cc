// ONNX importers: GreaterOrEqual, LessOrEqual.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

/// LessOrEqual / GreaterOrEqual as not(greater) / not(less), NaN aside.
template <ElementWiseOperation kOp>
Status importNotCompare(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * c, elementwise(ctx, node, a, b, kOp));
  IUnaryLayer* n = ctx.network().addUnary(*c, UnaryOperation::kNOT);
  KO_RETURN_IF_ERROR(ctx.check(n, node, "not"));
  return ctx.setOutput(node, 0, n->getOutput(0));
}

KILN_ONNX_REGISTER("", "GreaterOrEqual", importNotCompare<ElementWiseOperation::kLESS>);
KILN_ONNX_REGISTER("", "LessOrEqual", importNotCompare<ElementWiseOperation::kGREATER>);

}  // namespace
}  // namespace kiln::onnx
