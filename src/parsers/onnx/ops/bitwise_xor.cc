// ONNX BitwiseXor (opset 18): a xor b on integers of one type, numpy broadcasting (Kiln's kBITWISE_XOR).
#include "parsers/onnx/ops/bitwise_util.h"

namespace kiln::onnx {
namespace {

Status importBitwiseXor(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importBitwiseBinary(ctx, node, ElementWiseOperation::kBITWISE_XOR);
}

KILN_ONNX_REGISTER("", "BitwiseXor", importBitwiseXor);

}  // namespace
}  // namespace kiln::onnx
