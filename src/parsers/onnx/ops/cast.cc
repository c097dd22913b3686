// ONNX Cast (opsets 6-21). FLOAT8E4M3FN is Kiln's kFP8: saturate = 1 (the default) clamps to +-448 as Kiln's
// fp8 conversion does; saturate = 0 gives NaN for values past the type's range (|x| > 464, which would round
// beyond 448, and infinities). INT4/UINT4 (opset 21) have no computable Kiln type: they travel unpacked as
// INT8/UINT8 tensors holding the 4-bit values; casting to them wraps (keeps the low 4 bits, as ONNX Runtime does).
#include <limits>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

bool isFloat(DataType t) {
  return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16 || t == DataType::kFLOAT64 ||
         t == DataType::kFP8;
}

/// x cast to a 4-bit integer carried in 8 bits: truncated to an integer, then wrapped to [-8, 7] or [0, 15].
Result<ITensor*> castToInt4(ImportContext& ctx, Node const& node, ITensor* x, bool isSigned) {
  KO_ASSIGN_OR_RETURN(ITensor * v, cast(ctx, node, x, DataType::kINT64));
  KO_ASSIGN_OR_RETURN(ITensor * sixteen, scalar(ctx, node, DataType::kINT64, 16.0));
  ITensor* shifted = v;
  if (isSigned) {
    KO_ASSIGN_OR_RETURN(ITensor * eight, scalar(ctx, node, DataType::kINT64, 8.0));
    KO_ASSIGN_OR_RETURN(shifted, elementwise(ctx, node, v, eight, ElementWiseOperation::kSUM));
  }
  // v - 16 * floor((v [+ 8]) / 16) is v modulo 16 into the type's range.
  KO_ASSIGN_OR_RETURN(ITensor * q, elementwise(ctx, node, shifted, sixteen, ElementWiseOperation::kFLOOR_DIV));
  KO_ASSIGN_OR_RETURN(q, elementwise(ctx, node, q, sixteen, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * y, elementwise(ctx, node, v, q, ElementWiseOperation::kSUB));
  return cast(ctx, node, y, isSigned ? DataType::kINT8 : DataType::kUINT8);
}

/// x cast to fp8 E4M3FN without saturation: NaN where |x| would round past 448 (or is infinite).
Result<ITensor*> castToFp8NoSaturate(ImportContext& ctx, Node const& node, ITensor* x) {
  ITensor* xf = x;
  if (!isFloat(x->getType()) || x->getType() == DataType::kFP8) {
    KO_ASSIGN_OR_RETURN(xf, cast(ctx, node, x, DataType::kFLOAT));
  }
  DataType const t = xf->getType();
  KO_ASSIGN_OR_RETURN(ITensor * a, unary(ctx, node, xf, UnaryOperation::kABS));
  // 464 is halfway between 448 and the next E4M3 step (480, NaN's encoding in FN); it rounds to even: 448.
  KO_ASSIGN_OR_RETURN(ITensor * limit, scalar(ctx, node, t, 464.0));
  KO_ASSIGN_OR_RETURN(ITensor * over, elementwise(ctx, node, a, limit, ElementWiseOperation::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * nan, scalar(ctx, node, t, std::numeric_limits<double>::quiet_NaN()));
  KO_ASSIGN_OR_RETURN(ITensor * y, select(ctx, node, over, nan, xf));
  return cast(ctx, node, y, DataType::kFP8);
}

Status importCast(ImportContext& ctx, Node const& node) {
  auto const* a = findAttr(node, "to");
  if (a == nullptr) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "attribute 'to' is required");
  }
  KO_ASSIGN_OR_RETURN(int64_t to, attrInt(node, "to", 0));
  KO_ASSIGN_OR_RETURN(int64_t saturate, attrInt(node, "saturate", 1));
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  if (to == kOnnxInt4 || to == kOnnxUint4) {
    KO_ASSIGN_OR_RETURN(ITensor * y, castToInt4(ctx, node, x, to == kOnnxInt4));
    return ctx.setOutput(node, 0, y);
  }
  auto type = fromOnnxType(static_cast<int32_t>(to));
  if (!type.ok()) {
    return ImportContext::nodeError(type.status.code, node, type.status.message);
  }
  if (type.value == DataType::kFP8 && saturate == 0 && x->getType() != DataType::kFP8) {
    KO_ASSIGN_OR_RETURN(ITensor * y, castToFp8NoSaturate(ctx, node, x));
    return ctx.setOutput(node, 0, y);
  }
  ICastLayer* l = ctx.network().addCast(*x, type.value);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Cast", importCast);

}  // namespace
}  // namespace kiln::onnx
