// ONNX importer: QuantizeLinear.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/quantize_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace quantize_ops_detail;  // NOLINT(google-build-using-namespace)

Status importQuantizeLinear(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scale, ctx.tensor(node, 1));
  ITensor* zp = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(zp, ctx.tensor(node, 2));
  }
  DataType outType = DataType::kUINT8;
  KO_ASSIGN_OR_RETURN(int64_t outAttr, attrInt(node, "output_dtype", 0));
  if (zp != nullptr) {
    outType = zp->getType();
  } else if (outAttr != 0) {
    KO_ASSIGN_OR_RETURN(outType, fromOnnxType(static_cast<int32_t>(outAttr)));
  }
  KO_ASSIGN_OR_RETURN(ScaleLayout s, scaleLayout(ctx, node, x, scale, zp));
  if (scale->getType() != x->getType()) {
    ICastLayer* c = ctx.network().addCast(*scale, x->getType());
    KO_RETURN_IF_ERROR(ctx.check(c, node, "cast_scale"));
    scale = c->getOutput(0);
  }
  IQuantizeLayer* l = ctx.network().addQuantize(*x, *scale, outType);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "quantize"));
  applyLayout(l, s);
  if (zp != nullptr) {
    l->setInput(2, *zp);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "QuantizeLinear", importQuantizeLinear);

}  // namespace
}  // namespace kiln::onnx
