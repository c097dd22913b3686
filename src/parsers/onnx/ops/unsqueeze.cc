// ONNX importer for Unsqueeze: axes (positions in the output) from the attribute (before opset 13) or input 1,
// constant (checked here) or known only at run time (checked when the engine runs).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importUnsqueeze(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> axes;
  if (ctx.opset() < 13) {
    if (findAttr(node, "axes") == nullptr) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axes are required");
    }
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else {
    if (!ImportContext::hasInput(node, 1)) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axes are required");
    }
    if (ctx.constant(node, 1) == nullptr) {
      KO_ASSIGN_OR_RETURN(ITensor * axesT, int64Vector(ctx, node, 1));
      KO_ASSIGN_OR_RETURN(int64_t n, vectorLength(node, axesT, "axes"));
      if (r + n > Dims::MAX_DIMS) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "output rank ", r + n, " exceeds ",
                                        Dims::MAX_DIMS);
      }
      IUnsqueezeLayer* l = ctx.network().addUnsqueeze(*x, *axesT);
      KO_RETURN_IF_ERROR(ctx.check(l, node, "unsqueeze"));
      return ctx.setOutput(node, 0, l->getOutput(0));
    }
    KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 1));
  }
  if (r + static_cast<int64_t>(axes.size()) > Dims::MAX_DIMS) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node, "output rank exceeds ", Dims::MAX_DIMS);
  }
  int32_t const outRank = r + static_cast<int32_t>(axes.size());
  for (auto& a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, outRank));
    a = n;
  }
  KO_ASSIGN_OR_RETURN(ITensor * axesT, ctx.int64Tensor(axes, node.name() + "_axes"));
  IUnsqueezeLayer* l = ctx.network().addUnsqueeze(*x, *axesT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "unsqueeze"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Unsqueeze", importUnsqueeze);

}  // namespace
}  // namespace kiln::onnx
