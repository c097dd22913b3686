// Shared import of ONNX BitwiseAnd/Or/Xor (opset 18): numpy broadcasting of two integer inputs of one type onto
// Kiln's bitwise ElementWiseOperation extensions.
#pragma once

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {

/// Imports a two-input bitwise node as one ElementWise layer of `op`; refuses non-integer inputs by name.
inline Status importBitwiseBinary(ImportContext& ctx, ::onnx::NodeProto const& node, ElementWiseOperation op) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  if (a->getType() != b->getType() || a->getType() == DataType::kBOOL || a->getType() == DataType::kFLOAT ||
      a->getType() == DataType::kHALF || a->getType() == DataType::kBF16 || a->getType() == DataType::kFLOAT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node,
                                    "needs two integer inputs of one type");
  }
  KO_ASSIGN_OR_RETURN(ITensor * y, elementwise(ctx, node, a, b, op));
  return ctx.setOutput(node, 0, y);
}

}  // namespace kiln::onnx
