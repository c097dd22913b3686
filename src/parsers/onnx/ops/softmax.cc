// ONNX importers: Softmax, LogSoftmax.
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"
#include "parsers/onnx/ops/math_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace math_ops_detail;  // NOLINT(google-build-using-namespace)

/// Softmax/LogSoftmax. Before opset 13 the input is flattened to 2-D at `axis` (default 1) and the softmax runs
/// over the flattened inner part; from 13 it runs over the single axis (default -1).
template <bool kLog>
Status importSoftmax(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool const legacy = ctx.opset() < 13;
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", legacy ? 1 : -1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  ITensor* y = x;
  IShapeLayer* shape = nullptr;
  if (legacy && !(axis == r - 1)) {
    // Flatten to [outer, inner], softmax over axis 1, then restore the shape.
    shape = ctx.network().addShape(*x);
    KO_RETURN_IF_ERROR(ctx.check(shape, node, "shape"));
    Dims const in = x->getDimensions();
    int64_t outer = 1;
    bool outerKnown = true;
    for (int32_t i = 0; i < axis; ++i) {
      outerKnown &= in.d[i] >= 0;
      outer *= in.d[i];
    }
    if (outerKnown) {
      KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, x, Dims{2, {outer, -1}}));
    } else if (axis == 1) {
      KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, x, Dims{2, {0, -1}}));
    } else {
      return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                      "dynamic extents before the axis are not supported yet");
    }
    axis = 1;
  }
  ISoftMaxLayer* sm = ctx.network().addSoftMax(*y);
  KO_RETURN_IF_ERROR(ctx.check(sm, node, "softmax"));
  sm->setAxes(1U << static_cast<uint32_t>(axis));
  y = sm->getOutput(0);
  if (kLog) {
    IUnaryLayer* lg = ctx.network().addUnary(*y, UnaryOperation::kLOG);
    KO_RETURN_IF_ERROR(ctx.check(lg, node, "log"));
    y = lg->getOutput(0);
  }
  if (shape != nullptr) {
    IShuffleLayer* back = ctx.network().addShuffle(*y);
    KO_RETURN_IF_ERROR(ctx.check(back, node, "restore_shape"));
    back->setInput(1, *shape->getOutput(0));
    y = back->getOutput(0);
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Softmax", importSoftmax<false>);
KILN_ONNX_REGISTER("", "LogSoftmax", importSoftmax<true>);

}  // namespace
}  // namespace kiln::onnx
