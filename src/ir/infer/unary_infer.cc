// Shape inference of Unary: same shape; bool output for kISINF/kISNAN; kNOT on bool,
// kBITWISE_NOT (Kiln extension) on integers, kABS/kNEG/kSIGN also on
// signed integers, the rest on floating-point types.
#include "ir/extension_enums.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferUnary(InferContext& ctx) {
  if (ctx.numInputs() != 1 || !ctx.present(0))
    return ctx.error("needs exactly one input");
  int64_t opValue = ctx.node.attrs.getInt("op", -1);
  if (!isValidUnaryOperation(opValue))
    return ctx.error("has an invalid operation ", opValue);
  auto op = static_cast<UnaryOperation>(opValue);
  DataType t = ctx.in[0].dtype;
  bool isFloat = isFloatType(t);
  bool isSignedInt = t == DataType::kINT8 || t == DataType::kINT16 || t == DataType::kINT32 || t == DataType::kINT64;
  DataType outType = t;
  switch (op) {
    case UnaryOperation::kNOT:
      if (t != DataType::kBOOL)
        return ctx.error("kNOT needs a bool input, not ", dataTypeName(t));
      break;
    case UnaryOperation::kBITWISE_NOT:
      if (!isBitwiseType(t))
        return ctx.error("kBITWISE_NOT needs an integer input, not ", dataTypeName(t));
      break;
    case UnaryOperation::kABS:
    case UnaryOperation::kNEG:
    case UnaryOperation::kSIGN:
      if (!isFloat && !isSignedInt)
        return ctx.error("needs a float or signed integer input, not ", dataTypeName(t));
      break;
    case UnaryOperation::kISINF:
    case UnaryOperation::kISNAN:
      if (!isFloat)
        return ctx.error("needs a floating-point input, not ", dataTypeName(t));
      outType = DataType::kBOOL;
      break;
    case UnaryOperation::kEXP:
    case UnaryOperation::kLOG:
    case UnaryOperation::kSQRT:
    case UnaryOperation::kRECIP:
    case UnaryOperation::kSIN:
    case UnaryOperation::kCOS:
    case UnaryOperation::kTAN:
    case UnaryOperation::kSINH:
    case UnaryOperation::kCOSH:
    case UnaryOperation::kASIN:
    case UnaryOperation::kACOS:
    case UnaryOperation::kATAN:
    case UnaryOperation::kASINH:
    case UnaryOperation::kACOSH:
    case UnaryOperation::kATANH:
    case UnaryOperation::kCEIL:
    case UnaryOperation::kFLOOR:
    case UnaryOperation::kERF:
    case UnaryOperation::kROUND:
      if (!isFloat)
        return ctx.error("needs a floating-point input, not ", dataTypeName(t));
      break;
  }
  ctx.out[0] = {outType, ctx.in[0].shape};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kUnary, inferUnary);

}  // namespace kiln::ir
