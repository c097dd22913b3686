// ONNX ConvInteger: (x - x_zero_point) conv (w - w_zero_point) as INT32, exact (conv_integer_util.h).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/conv_integer_util.h"

namespace kiln::onnx {
namespace {

Status importConvInteger(ImportContext& ctx, ::onnx::NodeProto const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * acc, integer::convAccumulator(ctx, node, 0, 2, 1, 3, -1));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::cast(ctx, node, acc, DataType::kINT32));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "ConvInteger", importConvInteger);

}  // namespace
}  // namespace kiln::onnx
