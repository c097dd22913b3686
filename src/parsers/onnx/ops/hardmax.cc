// ONNX importer: Hardmax.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/misc_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace misc_ops_detail;  // NOLINT(google-build-using-namespace)

/// Hardmax: TopK k = 1 for the arg max, then OneHot back onto the axis. Before opset 13 the input is flattened
/// to 2-D at `axis` (static extents needed when that is not the last axis).
Status importHardmax(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(int32_t r, rankOf(node, x));
  bool const legacy = ctx.opset() < 13;
  KO_ASSIGN_OR_RETURN(int64_t axisAttr, attrInt(node, "axis", legacy ? 1 : -1));
  if (r == 0) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "input must have rank >= 1");
  }
  KO_ASSIGN_OR_RETURN(int32_t axis, normalizeAxis(node, axisAttr, r));
  Dims const in = x->getDimensions();
  ITensor* t = x;
  bool flattened = false;
  if (legacy && axis != r - 1) {
    KO_ASSIGN_OR_RETURN(Dims d, staticDims(node, x, 0));
    int64_t outer = 1;
    for (int32_t i = 0; i < axis; ++i) {
      outer *= d.d[i];
    }
    KO_ASSIGN_OR_RETURN(t, reshape(ctx, node, x, Dims{2, {outer, -1}}));
    axis = 1;
    flattened = true;
  }
  Dims const td = t->getDimensions();
  if (td.d[axis] < 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node,
                                    "needs a static extent on the axis (not supported yet)");
  }
  ITopKLayer* top = ctx.network().addTopK(*t, TopKOperation::kMAX, 1, 1U << static_cast<uint32_t>(axis));
  KO_RETURN_IF_ERROR(ctx.check(top, node, "topk"));
  top->setIndicesType(DataType::kINT64);
  KO_ASSIGN_OR_RETURN(ITensor * axes, ctx.int64Tensor({axis}, node.name() + "_axes"));
  ISqueezeLayer* sq = ctx.network().addSqueeze(*top->getOutput(1), *axes);
  KO_RETURN_IF_ERROR(ctx.check(sq, node, "squeeze"));
  if (t->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DATATYPE, node, "supports FLOAT only");
  }
  KO_ASSIGN_OR_RETURN(Constant * vals, ctx.newConstant(DataType::kFLOAT, Dims{1, {2}}));
  float const v[2] = {0.0F, 1.0F};
  std::memcpy(vals->bytes.data(), v, sizeof(v));
  KO_ASSIGN_OR_RETURN(ITensor * vt, ctx.constantTensor(vals, node.name() + "_values"));
  KO_ASSIGN_OR_RETURN(ITensor * depth, scalar(ctx, node, DataType::kINT64, static_cast<double>(td.d[axis]), "_depth"));
  IOneHotLayer* oh = ctx.network().addOneHot(*sq->getOutput(0), *vt, *depth, axis);
  KO_RETURN_IF_ERROR(ctx.check(oh, node, "onehot"));
  ITensor* y = oh->getOutput(0);
  if (flattened) {
    KO_ASSIGN_OR_RETURN(y, reshape(ctx, node, y, in));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "Hardmax", importHardmax);

}  // namespace
}  // namespace kiln::onnx
