// ONNX importers: Add, Mul, Div, Equal, Greater, Less, And, Or, Xor.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

template <ElementWiseOperation kOp>
Status importBinary(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * out, elementwise(ctx, node, a, b, kOp));
  return ctx.setOutput(node, 0, out);
}

KILN_ONNX_REGISTER("", "Add", importBinary<ElementWiseOperation::kSUM>);
KILN_ONNX_REGISTER("", "Mul", importBinary<ElementWiseOperation::kPROD>);
KILN_ONNX_REGISTER("", "Div", importBinary<ElementWiseOperation::kDIV>);
KILN_ONNX_REGISTER("", "Equal", importBinary<ElementWiseOperation::kEQUAL>);
KILN_ONNX_REGISTER("", "Greater", importBinary<ElementWiseOperation::kGREATER>);
KILN_ONNX_REGISTER("", "Less", importBinary<ElementWiseOperation::kLESS>);
KILN_ONNX_REGISTER("", "And", importBinary<ElementWiseOperation::kAND>);
KILN_ONNX_REGISTER("", "Or", importBinary<ElementWiseOperation::kOR>);
KILN_ONNX_REGISTER("", "Xor", importBinary<ElementWiseOperation::kXOR>);

}  // namespace
}  // namespace kiln::onnx
