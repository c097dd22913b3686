// ONNX BitwiseNot (opset 18): ~x on an integer input (Kiln's UnaryOperation::kBITWISE_NOT).
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

Status importBitwiseNot(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  DataType const t = x->getType();
  if (t == DataType::kBOOL || t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 ||
      t == DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "needs an integer input");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, unary(ctx, node, x, UnaryOperation::kBITWISE_NOT));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "BitwiseNot", importBitwiseNot);

}  // namespace
}  // namespace kiln::onnx
