// ONNX importer: PRelu.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

Status importPRelu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * slope, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  KO_ASSIGN_OR_RETURN(slope, broadcastToRank(ctx, node, slope, r));
  IParametricReLULayer* l = ctx.network().addParametricReLU(*x, *slope);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "prelu"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "PRelu", importPRelu);

}  // namespace
}  // namespace kiln::onnx
