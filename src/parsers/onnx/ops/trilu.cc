// ONNX Trilu: keeps the upper (col - row >= k) or lower (col - row <= k) triangle of the last two axes and zeroes
// the rest, composed from an INT64 offset grid (Fill kLINSPACE), a comparison with k and a Select; k may be a
// run-time 0-D input, the leading axes broadcast, zero-size inputs give zero-size outputs.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importTrilu(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int64_t upper, attrInt(node, "upper", 1));
  ITensor* k = nullptr;
  if (ImportContext::hasInput(node, 1)) {
    if (Constant const* c = ctx.constant(node, 1)) {
      if (c->count() != 1) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "k must hold one value, got ", c->count());
      }
      KO_ASSIGN_OR_RETURN(Constant * kc, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
      int64_t v = c->asInt(0);
      std::memcpy(kc->bytes.data(), &v, sizeof(v));
      KO_ASSIGN_OR_RETURN(k, ctx.constantTensor(kc, node.name() + "_k_value"));
    } else {
      KO_ASSIGN_OR_RETURN(k, ctx.tensor(node, 1));
      KO_ASSIGN_OR_RETURN(k, compose::cast(ctx, node, k, DataType::kINT64));
      KO_ASSIGN_OR_RETURN(k, reshape(ctx, node, k, Dims{0, {}}));
    }
  } else {
    KO_ASSIGN_OR_RETURN(k, compose::scalar(ctx, node, DataType::kINT64, 0, "_k"));
  }
  KO_ASSIGN_OR_RETURN(ITensor * extents, compose::lastTwoExtents(ctx, node, x));
  KO_ASSIGN_OR_RETURN(ITensor * offsets, compose::diagonalOffsets(ctx, node, extents));
  // Elements outside the kept triangle: offset < k (upper) or offset > k (lower).
  KO_ASSIGN_OR_RETURN(ITensor * drop,
                      compose::binary(ctx, node, offsets, k,
                                      upper != 0 ? ElementWiseOperation::kLESS : ElementWiseOperation::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, x->getType(), 0, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * y, compose::select(ctx, node, drop, zero, x));
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Trilu", importTrilu);

}  // namespace
}  // namespace kiln::onnx
