// ONNX BitwiseOr (opset 18): a or b on integers of one type, numpy broadcasting (Kiln's kBITWISE_OR).
#include "parsers/onnx/ops/bitwise_util.h"

namespace kiln::onnx {
namespace {

Status importBitwiseOr(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importBitwiseBinary(ctx, node, ElementWiseOperation::kBITWISE_OR);
}

KILN_ONNX_REGISTER("", "BitwiseOr", importBitwiseOr);

}  // namespace
}  // namespace kiln::onnx
