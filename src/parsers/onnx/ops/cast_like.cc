// ONNX CastLike (opset 15): casts input 0 to the element type of input 1 (whose values are not read).
#include "parsers/onnx/import_context.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importCastLike(ImportContext& ctx, Node const& node) {
  if (node.input_size() != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects 2 inputs, got ", node.input_size());
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  DataType to = DataType::kFLOAT;
  if (Constant const* c = ctx.constant(node, 1)) {
    to = c->type;  // no layer for a constant whose values are never read
  } else {
    KO_ASSIGN_OR_RETURN(ITensor * like, ctx.tensor(node, 1));
    to = like->getType();
  }
  ICastLayer* l = ctx.network().addCast(*x, to);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "cast"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "CastLike", importCastLike);

}  // namespace
}  // namespace kiln::onnx
