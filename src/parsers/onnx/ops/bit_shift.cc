// ONNX BitShift on unsigned integers, composed exactly: x << y = x * 2^y and x >> y = x / 2^y, where 2^y is an
// integer power in x's type; shifts by the bit width or more give 0 through an explicit Select (not through how
// a backend wraps the power or divides by zero).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importBitShift(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * y, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(std::string direction, attrString(node, "direction", ""));
  if (direction != "LEFT" && direction != "RIGHT") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "direction must be LEFT or RIGHT, got '", direction,
                                    "'");
  }
  DataType const t = x->getType();
  if (t != DataType::kUINT8 && t != DataType::kUINT16 && t != DataType::kUINT32 && t != DataType::kUINT64) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node,
                                    "BitShift needs an unsigned integer input");
  }
  KO_ASSIGN_OR_RETURN(y, compose::cast(ctx, node, y, t));
  KO_ASSIGN_OR_RETURN(ITensor * two, compose::scalar(ctx, node, t, 2, "_two"));
  KO_ASSIGN_OR_RETURN(ITensor * scale, compose::binary(ctx, node, two, y, ElementWiseOperation::kPOW));
  KO_ASSIGN_OR_RETURN(ITensor * out,
                      compose::binary(ctx, node, x, scale,
                                      direction == "LEFT" ? ElementWiseOperation::kPROD : ElementWiseOperation::kDIV));
  int64_t const width = static_cast<int64_t>(elementSize(t)) * 8;
  KO_ASSIGN_OR_RETURN(ITensor * widthT, compose::scalar(ctx, node, t, static_cast<double>(width), "_width"));
  KO_ASSIGN_OR_RETURN(ITensor * inRange, compose::binary(ctx, node, y, widthT, ElementWiseOperation::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, t, 0, "_zero"));
  KO_ASSIGN_OR_RETURN(out, compose::select(ctx, node, inRange, out, zero));
  return ctx.setOutput(node, 0, out);
}

KILN_ONNX_REGISTER("", "BitShift", importBitShift);

}  // namespace
}  // namespace kiln::onnx
