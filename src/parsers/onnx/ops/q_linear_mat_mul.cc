// ONNX QLinearMatMul: requantized (a - a_zp) x (b - b_zp), exact until the final rounding (integer_math_util.h).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/integer_math_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importQLinearMatMul(ImportContext& ctx, Node const& node) {
  if (node.input_size() < 8) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 8 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 3));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  KO_ASSIGN_OR_RETURN(ITensor * a0, integer::centered(ctx, node, a, 2, ra >= 2 ? ra - 2 : 0));
  KO_ASSIGN_OR_RETURN(ITensor * b0, integer::centered(ctx, node, b, 5, rb - 1));
  KO_ASSIGN_OR_RETURN(ITensor * acc,
                      compose::matmul(ctx, node, a0, MatrixOperation::kNONE, b0, MatrixOperation::kNONE));
  KO_ASSIGN_OR_RETURN(ITensor * y, integer::requantize(ctx, node, acc, 1, 4, 6, 7));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "QLinearMatMul", importQLinearMatMul);

}  // namespace
}  // namespace kiln::onnx
