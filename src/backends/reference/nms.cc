// Reference kernel of NMS (ONNX NonMaxSuppression semantics): per batch item and class, boxes whose score is
// above the score threshold are taken by decreasing score (ties: lower box index first), at most
// topk_box_limit of them; a box is kept when its IoU with every kept box is <= the IoU threshold, until
// max_output_boxes_per_class are kept. Rows (batch, class, box) come in batch, class, then score order; the
// row count K is known only at the end, so output 0 is allocated through LaunchContext::allocateOutput.
#include <algorithm>
#include <array>
#include <cmath>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using Box = std::array<double, 4>;  // x1, y1, x2, y2 with x1 <= x2, y1 <= y2

double iou(Box const& a, Box const& b) {
  double w = std::min(a[2], b[2]) - std::max(a[0], b[0]);
  double h = std::min(a[3], b[3]) - std::max(a[1], b[1]);
  if (w <= 0 || h <= 0) return 0.0;
  double inter = w * h;
  double uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return uni > 0 ? inter / uni : 0.0;
}

Status runNMS(LaunchContext const& ctx, bool centerSizes, int64_t topkLimit, std::string const& what) {
  TensorView const& boxes = ctx.inputs[0];
  TensorView const& scores = ctx.inputs[1];
  if (scores.shape.nbDims != 3 || (boxes.shape.nbDims != 3 && boxes.shape.nbDims != 4))
    return invalidArgument(what, ": bad boxes ", dimsToString(boxes.shape), " or scores ", dimsToString(scores.shape));
  int64_t nb = scores.shape.d[0], nbox = scores.shape.d[1], nc = scores.shape.d[2];
  bool perClass = boxes.shape.nbDims == 4;
  if (boxes.shape.d[0] != nb || boxes.shape.d[1] != nbox || boxes.shape.d[boxes.shape.nbDims - 1] != 4 ||
      (perClass && boxes.shape.d[2] != nc))
    return invalidArgument(what, ": boxes ", dimsToString(boxes.shape), " do not fit scores ",
                           dimsToString(scores.shape));
  int64_t maxOut = ctx.inputs[2].data ? loadAsInt(ctx.inputs[2], 0) : 0;
  double iouThreshold = ctx.inputs.size() > 3 && ctx.inputs[3].data ? loadAsDouble(ctx.inputs[3], 0) : 0.0;
  bool hasScoreThreshold = ctx.inputs.size() > 4 && ctx.inputs[4].data;
  double scoreThreshold = hasScoreThreshold ? loadAsDouble(ctx.inputs[4], 0) : 0.0;
  auto loadBox = [&](int64_t b, int64_t i, int64_t c) {
    int64_t base = perClass ? ((b * nbox + i) * nc + c) * 4 : (b * nbox + i) * 4;
    Box v{loadAsDouble(boxes, base), loadAsDouble(boxes, base + 1), loadAsDouble(boxes, base + 2),
          loadAsDouble(boxes, base + 3)};
    if (centerSizes) return Box{v[0] - v[2] / 2, v[1] - v[3] / 2, v[0] + v[2] / 2, v[1] + v[3] / 2};
    return Box{std::min(v[0], v[2]), std::min(v[1], v[3]), std::max(v[0], v[2]), std::max(v[1], v[3])};
  };
  std::vector<std::array<int64_t, 3>> rows;
  for (int64_t b = 0; maxOut > 0 && b < nb; ++b) {
    for (int64_t c = 0; c < nc; ++c) {
      std::vector<std::pair<double, int64_t>> cand;
      for (int64_t i = 0; i < nbox; ++i) {
        double s = loadAsDouble(scores, (b * nbox + i) * nc + c);
        if (std::isnan(s) || (hasScoreThreshold && !(s > scoreThreshold))) continue;
        cand.push_back({s, i});
      }
      std::stable_sort(cand.begin(), cand.end(), [](auto const& x, auto const& y) { return x.first > y.first; });
      if (static_cast<int64_t>(cand.size()) > topkLimit) cand.resize(static_cast<size_t>(topkLimit));
      std::vector<Box> kept;
      for (auto const& [s, i] : cand) {
        if (static_cast<int64_t>(kept.size()) >= maxOut) break;
        Box bx = loadBox(b, i, c);
        bool keep = true;
        for (Box const& k : kept)
          if (iou(bx, k) > iouThreshold) {
            keep = false;
            break;
          }
        if (!keep) continue;
        kept.push_back(bx);
        rows.push_back({b, c, i});
      }
    }
  }
  auto k = static_cast<int64_t>(rows.size());
  Dims shape = makeDims({k, 3});
  TensorView out = ctx.outputs[0];
  if (dimsKnown(out.shape) && out.shape.nbDims == 2 && out.shape.d[0] == k && out.shape.d[1] == 3) {
    // Already allocated (host evaluation with a pinned shape).
  } else if (ctx.allocateOutput) {
    KILN_ASSIGN_OR_RETURN(out.data, ctx.allocateOutput(0, shape));
  } else {
    return invalidArgument(what, ": output ", dimsToString(out.shape), " does not fit ", dimsToString(shape),
                           " and cannot be allocated here");
  }
  out.shape = shape;
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < 3; ++j) storeFromInt(out, r * 3 + j, rows[r][j]);
  if (ctx.outputs.size() > 1 && ctx.outputs[1].data) storeFromInt(ctx.outputs[1], 0, k);
  return Status::ok();
}

Tactic nmsTactic() {
  return makeTactic(
      "nms_reference", ir::OpType::kNMS,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        bool center = node.attrs.getInt("box_format", 0) == static_cast<int64_t>(BoundingBoxFormat::kCENTER_SIZES);
        int64_t limit = node.attrs.getInt("topk_box_limit", 5000);
        std::string what = node.describe();
        return makeKernel([=](LaunchContext const& ctx) { return runNMS(ctx, center, limit, what); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() >= 3 && isFloatType(in[0].dtype) && isFloatType(in[1].dtype) && isIntegerType(in[2].dtype) &&
               out.size() == 2 && typeIn(out[0].dtype, {DataType::kINT32, DataType::kINT64});
      });
}

KILN_REGISTER_TACTIC(nmsTactic);

}  // namespace
}  // namespace kiln::backends::reference
