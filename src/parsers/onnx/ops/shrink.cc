// ONNX Shrink: y = x + bias where x < -lambd, x - bias where x > lambd, else 0; composed from comparisons and
// Selects in the input's type.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importShrink(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(float lambd, attrFloat(node, "lambd", 0.5F));
  KO_ASSIGN_OR_RETURN(float bias, attrFloat(node, "bias", 0.0F));
  DataType const t = x->getType();
  KO_ASSIGN_OR_RETURN(ITensor * lo, compose::scalar(ctx, node, t, -static_cast<double>(lambd), "_neg_lambd"));
  KO_ASSIGN_OR_RETURN(ITensor * hi, compose::scalar(ctx, node, t, static_cast<double>(lambd), "_lambd"));
  KO_ASSIGN_OR_RETURN(ITensor * b, compose::scalar(ctx, node, t, static_cast<double>(bias), "_bias"));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, t, 0, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * below, compose::binary(ctx, node, x, lo, ElementWiseOperation::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * above, compose::binary(ctx, node, x, hi, ElementWiseOperation::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * plus, compose::binary(ctx, node, x, b, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * minus, compose::binary(ctx, node, x, b, ElementWiseOperation::kSUB));
  KO_ASSIGN_OR_RETURN(ITensor * outer, compose::select(ctx, node, above, minus, zero));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::select(ctx, node, below, plus, outer));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Shrink", importShrink);

}  // namespace
}  // namespace kiln::onnx
