// ONNX Mod: fmod = 0 takes the divisor's sign (a - b * floor(a / b)), fmod = 1 the dividend's
// (a - b * trunc(a / b)); floats (float64 included) through a float quotient, integers exactly with the
// floor/truncating integer divisions of ElementWise.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool isFloatType(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64;
}

Status importMod(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * a, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int64_t fmod, attrInt(node, "fmod", 0));
  using Op = ElementWiseOperation;
  ITensor* q = nullptr;
  if (isFloatType(a->getType())) {
    KO_ASSIGN_OR_RETURN(q, compose::binary(ctx, node, a, b, Op::kDIV));
    if (fmod != 0) {
      // trunc(q) = sign(q) * floor(|q|)
      KO_ASSIGN_OR_RETURN(ITensor * s, compose::unary(ctx, node, q, UnaryOperation::kSIGN));
      KO_ASSIGN_OR_RETURN(ITensor * m, compose::unary(ctx, node, q, UnaryOperation::kABS));
      KO_ASSIGN_OR_RETURN(m, compose::unary(ctx, node, m, UnaryOperation::kFLOOR));
      KO_ASSIGN_OR_RETURN(q, compose::binary(ctx, node, s, m, Op::kPROD));
    } else {
      KO_ASSIGN_OR_RETURN(q, compose::unary(ctx, node, q, UnaryOperation::kFLOOR));
    }
  } else {
    KO_ASSIGN_OR_RETURN(q, compose::binary(ctx, node, a, b, fmod != 0 ? Op::kDIV : Op::kFLOOR_DIV));
  }
  KO_ASSIGN_OR_RETURN(ITensor * bq, compose::binary(ctx, node, b, q, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::binary(ctx, node, a, bq, Op::kSUB));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Mod", importMod);

}  // namespace
}  // namespace kiln::onnx
