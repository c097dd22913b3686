// ONNX Compress: the slices of the input along `axis` (or of the flattened input) whose condition entry is true,
// as NonZero(condition) followed by a Gather; the output extent is known only while running.
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importCompress(ImportContext& ctx, Node const& node) {
  if (!ImportContext::hasInput(node, 0) || !ImportContext::hasInput(node, 1)) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "expects inputs input and condition");
  }
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * condition, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int32_t rc, rankOf(node, condition));
  if (rc != 1) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "condition must be 1-D, got rank ", rc);
  }
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  int32_t axis = 0;
  if (findAttr(node, "axis") != nullptr) {
    KO_ASSIGN_OR_RETURN(int64_t a, attrInt(node, "axis", 0));
    KO_ASSIGN_OR_RETURN(axis, normalizeAxis(node, a, r));
  } else {
    // No axis: select from the flattened input.
    KO_ASSIGN_OR_RETURN(x, reshape(ctx, node, x, Dims{1, {-1}}));
  }
  // A condition shorter than the axis selects only among its first entries; a longer one must be false past
  // the end (ONNX), which the gather's bounds check enforces.
  KO_ASSIGN_OR_RETURN(ITensor * cond, compose::cast(ctx, node, condition, DataType::kBOOL));
  INonZeroLayer* nz = ctx.network().addNonZero(*cond, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(nz, node, "nonzero"));
  KO_ASSIGN_OR_RETURN(ITensor * indices, reshape(ctx, node, nz->getOutput(0), Dims{1, {-1}}));
  IGatherLayer* g = ctx.network().addGather(*x, *indices, axis);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "gather"));
  return ctx.setOutput(node, 0, g->getOutput(0));
}

KILN_ONNX_REGISTER("", "Compress", importCompress);

}  // namespace
}  // namespace kiln::onnx
