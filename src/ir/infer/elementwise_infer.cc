// Shape inference of ElementWise: numpy broadcasting of the two inputs (right-aligned; TensorRT asks for equal
// ranks, Kiln also accepts different ones), both inputs of one type, bool output for comparisons,
// integer inputs for Kiln's bitwise extensions.
#include "ir/extension_enums.h"
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

bool isArithmeticType(DataType t) {
  switch (t) {
    case DataType::kFLOAT:
    case DataType::kHALF:
    case DataType::kBF16:
    case DataType::kINT8:
    case DataType::kUINT8:
    case DataType::kINT32:
    case DataType::kINT64:
    case DataType::kFLOAT64:
    case DataType::kINT16:
    case DataType::kUINT16:
    case DataType::kUINT32:
    case DataType::kUINT64:
      return true;
    case DataType::kBOOL:
    case DataType::kFP8:
    case DataType::kINT4:
    case DataType::kFP4:
    case DataType::kE8M0:
      return false;
  }
  return false;
}

Status inferElementWise(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1))
    return ctx.error("needs exactly two inputs");
  int64_t opValue = ctx.node.attrs.getInt("op", -1);
  if (!isValidElementWiseOperation(opValue))
    return ctx.error("has an invalid operation ", opValue);
  auto op = static_cast<ElementWiseOperation>(opValue);
  DataType ta = ctx.in[0].dtype, tb = ctx.in[1].dtype;
  if (ta != tb)
    return ctx.error("inputs have different types (", dataTypeName(ta), " and ", dataTypeName(tb), ")");
  DataType outType = ta;
  switch (op) {
    case ElementWiseOperation::kSUM:
    case ElementWiseOperation::kPROD:
    case ElementWiseOperation::kMAX:
    case ElementWiseOperation::kMIN:
    case ElementWiseOperation::kSUB:
    case ElementWiseOperation::kDIV:
    case ElementWiseOperation::kPOW:
    case ElementWiseOperation::kFLOOR_DIV:
      if (!isArithmeticType(ta))
        return ctx.error("cannot do arithmetic on ", dataTypeName(ta));
      break;
    case ElementWiseOperation::kAND:
    case ElementWiseOperation::kOR:
    case ElementWiseOperation::kXOR:
      if (ta != DataType::kBOOL)
        return ctx.error("logical operations need bool inputs, not ", dataTypeName(ta));
      break;
    case ElementWiseOperation::kEQUAL:
      if (!isArithmeticType(ta) && ta != DataType::kBOOL)
        return ctx.error("cannot compare ", dataTypeName(ta));
      outType = DataType::kBOOL;
      break;
    case ElementWiseOperation::kGREATER:
    case ElementWiseOperation::kLESS:
      if (!isArithmeticType(ta))
        return ctx.error("cannot order ", dataTypeName(ta));
      outType = DataType::kBOOL;
      break;
    case ElementWiseOperation::kBITWISE_AND:
    case ElementWiseOperation::kBITWISE_OR:
    case ElementWiseOperation::kBITWISE_XOR:
      if (!isBitwiseType(ta))
        return ctx.error("bitwise operations need integer inputs, not ", dataTypeName(ta));
      break;
  }
  Result<Dims> shape = broadcastShapes(ctx.in[0].shape, ctx.in[1].shape);
  if (!shape.isOk())
    return ctx.error(shape.status().message());
  ctx.out[0] = {outType, *shape};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kElementWise, inferElementWise);

}  // namespace kiln::ir
