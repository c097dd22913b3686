// ONNX importers: Not, Exp, Log, Sqrt, Reciprocal, Abs, Sin, Cos, Tan, Sinh, Cosh, Asin, Acos, Atan, Asinh, Acosh,
// Atanh, Ceil, Floor, Erf, Sign, Round, IsNaN.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"
#include "parsers/onnx/ops/elementwise_util.h"

namespace kiln::onnx {
namespace {

using namespace elementwise_detail;  // NOLINT(google-build-using-namespace)

template <UnaryOperation kOp>
Status importUnary(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  IUnaryLayer* l = ctx.network().addUnary(*x, kOp);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unary"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Not", importUnary<UnaryOperation::kNOT>);
KILN_ONNX_REGISTER("", "Exp", importUnary<UnaryOperation::kEXP>);
KILN_ONNX_REGISTER("", "Log", importUnary<UnaryOperation::kLOG>);
KILN_ONNX_REGISTER("", "Sqrt", importUnary<UnaryOperation::kSQRT>);
KILN_ONNX_REGISTER("", "Reciprocal", importUnary<UnaryOperation::kRECIP>);
KILN_ONNX_REGISTER("", "Abs", importUnary<UnaryOperation::kABS>);
KILN_ONNX_REGISTER("", "Sin", importUnary<UnaryOperation::kSIN>);
KILN_ONNX_REGISTER("", "Cos", importUnary<UnaryOperation::kCOS>);
KILN_ONNX_REGISTER("", "Tan", importUnary<UnaryOperation::kTAN>);
KILN_ONNX_REGISTER("", "Sinh", importUnary<UnaryOperation::kSINH>);
KILN_ONNX_REGISTER("", "Cosh", importUnary<UnaryOperation::kCOSH>);
KILN_ONNX_REGISTER("", "Asin", importUnary<UnaryOperation::kASIN>);
KILN_ONNX_REGISTER("", "Acos", importUnary<UnaryOperation::kACOS>);
KILN_ONNX_REGISTER("", "Atan", importUnary<UnaryOperation::kATAN>);
KILN_ONNX_REGISTER("", "Asinh", importUnary<UnaryOperation::kASINH>);
KILN_ONNX_REGISTER("", "Acosh", importUnary<UnaryOperation::kACOSH>);
KILN_ONNX_REGISTER("", "Atanh", importUnary<UnaryOperation::kATANH>);
KILN_ONNX_REGISTER("", "Ceil", importUnary<UnaryOperation::kCEIL>);
KILN_ONNX_REGISTER("", "Floor", importUnary<UnaryOperation::kFLOOR>);
KILN_ONNX_REGISTER("", "Erf", importUnary<UnaryOperation::kERF>);
KILN_ONNX_REGISTER("", "Sign", importUnary<UnaryOperation::kSIGN>);
KILN_ONNX_REGISTER("", "Round", importUnary<UnaryOperation::kROUND>);
KILN_ONNX_REGISTER("", "IsNaN", importUnary<UnaryOperation::kISNAN>);

}  // namespace
}  // namespace kiln::onnx
