// ONNX QLinearConv: the requantized integer convolution plus its INT32 bias (conv_integer_util.h).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/conv_integer_util.h"

namespace kiln::onnx {
namespace {

Status importQLinearConv(ImportContext& ctx, ::onnx::NodeProto const& node) {
  if (node.input_size() < 8) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects at least 8 inputs, got ",
                                    node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * acc, integer::convAccumulator(ctx, node, 0, 2, 3, 5, 8));
  KO_ASSIGN_OR_RETURN(ITensor * y, integer::requantize(ctx, node, acc, 1, 4, 6, 7));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "QLinearConv", importQLinearConv);

}  // namespace
}  // namespace kiln::onnx
