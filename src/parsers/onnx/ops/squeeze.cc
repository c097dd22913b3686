// ONNX importer for Squeeze: axes from the attribute (before opset 13) or input 1, constant (checked here) or known
// only at run time (checked when the engine runs); without axes, every extent-1 axis (static extents needed).
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/shape_tensor_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Status importSqueeze(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  std::vector<int64_t> axes;
  bool given = false;
  if (ctx.opset() < 13) {
    given = findAttr(node, "axes") != nullptr;
    KO_ASSIGN_OR_RETURN(axes, attrInts(node, "axes"));
  } else if (ImportContext::hasInput(node, 1)) {
    given = true;
    if (ctx.constant(node, 1) == nullptr) {
      KO_ASSIGN_OR_RETURN(ITensor * axesT, int64Vector(ctx, node, 1));
      KO_ASSIGN_OR_RETURN(int64_t n, vectorLength(node, axesT, "axes"));
      if (n > r) {
        return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, n, " axes for rank ", r);
      }
      ISqueezeLayer* l = ctx.network().addSqueeze(*x, *axesT);
      KO_RETURN_IF_ERROR(ctx.check(l, node, "squeeze"));
      return ctx.setOutput(node, 0, l->getOutput(0));
    }
    KO_ASSIGN_OR_RETURN(axes, constantInts(ctx, node, 1));
  }
  Dims const in = x->getDimensions();
  if (!given) {
    for (int32_t i = 0; i < r; ++i) {
      if (in.d[i] == 1) {
        axes.push_back(i);
      } else if (in.d[i] < 0) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                        "squeeze without axes needs static extents");
      }
    }
  }
  for (auto& a : axes) {
    KO_ASSIGN_OR_RETURN(int32_t n, normalizeAxis(node, a, r));
    if (in.d[n] > 1) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "axis ", a, " has extent ", in.d[n], ", not 1");
    }
    a = n;
  }
  KO_ASSIGN_OR_RETURN(ITensor * axesT, ctx.int64Tensor(axes, node.name() + "_axes"));
  ISqueezeLayer* l = ctx.network().addSqueeze(*x, *axesT);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "squeeze"));
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "Squeeze", importSqueeze);

}  // namespace
}  // namespace kiln::onnx
