// ONNX Sub: a - b with numpy broadcasting. Integer constants are subtracted on the host, so that shape
// arithmetic on constants (rank minus axis in the function bodies of LayerNormalization) stays constant for the
// importers that need constant shapes.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importSub(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(Constant const* folded, foldIntegerBinary(ctx, node, ElementWiseOperation::kSUB));
  if (folded != nullptr) {
    return ctx.setOutputConstant(node, 0, folded);
  }
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * y, elementwise(ctx, node, a, b, ElementWiseOperation::kSUB));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Sub", importSub);

}  // namespace
}  // namespace kiln::onnx
