// ONNX BitwiseAnd (opset 18): a and b on integers of one type, numpy broadcasting (Kiln's kBITWISE_AND).
#include "parsers/onnx/ops/bitwise_util.h"

namespace kiln::onnx {
namespace {

Status importBitwiseAnd(ImportContext& ctx, ::onnx::NodeProto const& node) {
  return importBitwiseBinary(ctx, node, ElementWiseOperation::kBITWISE_AND);
}

KILN_ONNX_REGISTER("", "BitwiseAnd", importBitwiseAnd);

}  // namespace
}  // namespace kiln::onnx
