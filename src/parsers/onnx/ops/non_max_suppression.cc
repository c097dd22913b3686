// ONNX importer: NonMaxSuppression.
#include <algorithm>
#include <cstring>
#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/index_ops_util.h"

namespace kiln::onnx {
namespace {

using namespace index_ops_detail;  // NOLINT(google-build-using-namespace)

/// NonMaxSuppression: ONNX scores [B, C, N] are transposed to Kiln's [B, N, C]; an absent
/// max_output_boxes_per_class is 0 (no boxes); thresholds become 0-D tensors.
Status importNMS(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * boxes, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * scores, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(int64_t center, attrInt(node, "center_point_box", 0));
  KO_ASSIGN_OR_RETURN(int32_t rs, rankOf(node, scores));
  if (rs != 3) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "scores must be 3-D, got rank ", rs);
  }
  IShuffleLayer* tr = ctx.network().addShuffle(*scores);
  KO_RETURN_IF_ERROR(ctx.check(tr, node, "scores_transpose"));
  tr->setFirstTranspose(Permutation{{0, 2, 1}});
  ITensor* maxOut = nullptr;
  if (ImportContext::hasInput(node, 2)) {
    KO_ASSIGN_OR_RETURN(ITensor * m, ctx.tensor(node, 2));
    KO_ASSIGN_OR_RETURN(maxOut, scalarInt64(ctx, node, m));
  } else {
    KO_ASSIGN_OR_RETURN(Constant * z, ctx.newConstant(DataType::kINT64, Dims{0, {}}));
    KO_ASSIGN_OR_RETURN(maxOut, ctx.constantTensor(z, node.name() + "_max_boxes"));
  }
  INMSLayer* l = ctx.network().addNMS(*boxes, *tr->getOutput(0), *maxOut, DataType::kINT64);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "nms"));
  l->setBoundingBoxFormat(center != 0 ? BoundingBoxFormat::kCENTER_SIZES : BoundingBoxFormat::kCORNER_PAIRS);
  for (int i = 3; i <= 4; ++i) {
    if (!ImportContext::hasInput(node, i)) {
      continue;
    }
    KO_ASSIGN_OR_RETURN(ITensor * t, ctx.tensor(node, i));
    KO_ASSIGN_OR_RETURN(int32_t rt, rankOf(node, t));
    if (rt != 0) {
      KO_ASSIGN_OR_RETURN(t, reshape(ctx, node, t, Dims{0, {}}));
    }
    l->setInput(i, *t);
  }
  return ctx.setOutput(node, 0, l->getOutput(0));
}

KILN_ONNX_REGISTER("", "NonMaxSuppression", importNMS);

}  // namespace
}  // namespace kiln::onnx
