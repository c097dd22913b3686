// ONNX MatMulInteger: (A - a_zero_point) x (B - b_zero_point) as INT32, exact (integer_math_util.h).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/integer_math_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importMatMulInteger(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t ra, rankOf(node, a));
  KO_ASSIGN_OR_RETURN(int32_t rb, rankOf(node, b));
  KO_ASSIGN_OR_RETURN(ITensor * a0, integer::centered(ctx, node, a, 2, ra >= 2 ? ra - 2 : 0));
  KO_ASSIGN_OR_RETURN(ITensor * b0, integer::centered(ctx, node, b, 3, rb - 1));
  KO_ASSIGN_OR_RETURN(ITensor * acc,
                      compose::matmul(ctx, node, a0, MatrixOperation::kNONE, b0, MatrixOperation::kNONE));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::cast(ctx, node, acc, DataType::kINT32));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "MatMulInteger", importMatMulInteger);

}  // namespace
}  // namespace kiln::onnx
