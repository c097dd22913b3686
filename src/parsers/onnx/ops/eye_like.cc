// ONNX EyeLike: a 2-D tensor shaped like the input with ones on the k-th diagonal (col - row == k), composed from
// an INT64 offset grid (Fill kLINSPACE), an Equal and a Cast to `dtype` (default: the input's type).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importEyeLike(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  if (r != 2) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must be 2-D, got rank ", r);
  }
  KO_ASSIGN_OR_RETURN(int64_t k, attrInt(node, "k", 0));
  DataType type = x->getType();
  if (findAttr(node, "dtype") != nullptr) {
    KO_ASSIGN_OR_RETURN(int64_t onnxType, attrInt(node, "dtype", 0));
    KO_ASSIGN_OR_RETURN(type, fromOnnxType(static_cast<int32_t>(onnxType)));
  }
  KO_ASSIGN_OR_RETURN(ITensor * extents, compose::lastTwoExtents(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * offsets, compose::diagonalOffsets(ctx, node, extents));
  KO_ASSIGN_OR_RETURN(ITensor * kt, ctx.int64Tensor({k}, node.name() + "_k"));
  KO_ASSIGN_OR_RETURN(ITensor * on, compose::binary(ctx, node, offsets, kt, ElementWiseOperation::kEQUAL));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::cast(ctx, node, on, type));
  if (y == on) {
    // A bool output still needs a layer of its own to carry the ONNX name.
    IIdentityLayer* id = ctx.network().addIdentity(*on);
    KO_RETURN_IF_ERROR(ctx.check(id, node, "identity"));
    y = id->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "EyeLike", importEyeLike);

}  // namespace
}  // namespace kiln::onnx
