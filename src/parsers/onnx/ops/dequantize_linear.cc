// ONNX importer: DequantizeLinear.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/quantize_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace quantize_ops_detail;  // NOLINT(google-build-using-namespace)

Status importDequantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  ITensor* zp = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(zp, ctx.tensor(node, 2));
  }
  KO_ASSIGN_OR_RETURN(ScaleLayout s, scaleLayout(ctx, node, x, scale, zp));
  IDequantizeLayer* l = ctx.network().addDequantize(*x, *scale, scale->getType());
  KO_RETURN_IF_ERROR(ctx.check(l, node, "dequantize"));
  applyLayout(l, s);
  if (zp != nullptr) {
    l->setInput(2, *zp);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "DequantizeLinear", importDequantizeLinear);

}  // namespace
}  // namespace kiln::onnx
