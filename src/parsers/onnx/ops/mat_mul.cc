// ONNX importer: MatMul.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/math_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace math_ops_detail;  // NOLINT(google-build-using-namespace)

Status importMatMul(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * y, matmul(ctx, node, a, MatrixOperation::kNONE, b, MatrixOperation::kNONE));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "MatMul", importMatMul);

}  // namespace
}  // namespace kiln::onnx
