// ONNX Pow: base ** exponent with numpy broadcasting; the output has the base's type. Exponents of another type
// are converted: to a float base's type, or to an integer base's type when both are integers; an integer base
// with a float exponent is raised in float64 and converted back (truncating, as numpy's astype does).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

Status importPow(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * base, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * exponent, ctx.tensor(node, 1));
  DataType const bt = base->getType(), et = exponent->getType();
  ITensor* y = nullptr;
  if (bt == et || isFloatType(bt) || !isFloatType(et)) {
    KO_ASSIGN_OR_RETURN(exponent, compose::cast(ctx, node, exponent, bt));
    KO_ASSIGN_OR_RETURN(y, compose::binary(ctx, node, base, exponent, ElementWiseOperation::kPOW));
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * b64, compose::cast(ctx, node, base, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(ITensor * e64, compose::cast(ctx, node, exponent, DataType::kFLOAT64));
    KO_ASSIGN_OR_RETURN(ITensor * p, compose::binary(ctx, node, b64, e64, ElementWiseOperation::kPOW));
    KO_ASSIGN_OR_RETURN(y, compose::cast(ctx, node, p, bt));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Pow", importPow);

}  // namespace
}  // namespace kiln::onnx
