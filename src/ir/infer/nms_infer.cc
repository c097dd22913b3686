// Shape inference of NMS: selected_indices [K, 3] with K known only at run time, and num_selected (0-D).
#include "ir/shape_inference.h"

#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferNMS(InferContext& ctx) {
  if (!ctx.present(0) || !ctx.present(1) || !ctx.present(2) || ctx.numInputs() > 5)
    return ctx.error("needs boxes, scores, max_output_boxes_per_class and optional thresholds");
  if (ctx.out.size() != 2) return ctx.error("needs two outputs (selected_indices, num_selected)");
  TensorInfo const& boxes = ctx.in[0];
  TensorInfo const& scores = ctx.in[1];
  if (!isFloatType(boxes.dtype) || !isFloatType(scores.dtype))
    return ctx.error("boxes and scores must be floating point, not ", dataTypeName(boxes.dtype), " and ",
                     dataTypeName(scores.dtype));
  int32_t br = boxes.shape.nbDims;
  if (br != 3 && br != 4) return ctx.error("boxes must be [B, N, 4] or [B, N, C, 4], not ", dimsToString(boxes.shape));
  if (boxes.shape.d[br - 1] >= 0 && boxes.shape.d[br - 1] != 4) return ctx.error("boxes' last axis must be 4");
  if (scores.shape.nbDims != 3) return ctx.error("scores must be [B, N, C], not ", dimsToString(scores.shape));
  auto clash = [](int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; };
  if (clash(boxes.shape.d[0], scores.shape.d[0]) || clash(boxes.shape.d[1], scores.shape.d[1]) ||
      (br == 4 && clash(boxes.shape.d[2], scores.shape.d[2])))
    return ctx.error("boxes ", dimsToString(boxes.shape), " and scores ", dimsToString(scores.shape), " disagree");
  if (!isIntegerType(ctx.in[2].dtype) || ctx.in[2].shape.nbDims != 0)
    return ctx.error("max_output_boxes_per_class must be a 0-D int32/int64 tensor");
  for (size_t i = 3; i < 5; ++i)
    if (ctx.present(i) && (!isFloatType(ctx.in[i].dtype) || volume(ctx.in[i].shape) > 1 || ctx.in[i].shape.nbDims > 1))
      return ctx.error("input ", i, " (threshold) must be a 0-D float tensor");
  auto fmt = ctx.node.attrs.getInt("box_format", 0);
  if (fmt < 0 || fmt >= EnumMax<BoundingBoxFormat>()) return ctx.error("unknown box format ", fmt);
  if (ctx.node.attrs.getInt("topk_box_limit", 5000) < 0) return ctx.error("topk_box_limit must be >= 0");
  auto it = static_cast<DataType>(ctx.node.attrs.getInt("indices_type", static_cast<int64_t>(DataType::kINT32)));
  if (it != DataType::kINT32 && it != DataType::kINT64)
    return ctx.error("indices type must be int32 or int64, not ", dataTypeName(it));
  ctx.out[0] = {it, makeDims({-1, 3})};
  Dims scalar{};
  scalar.nbDims = 0;
  ctx.out[1] = {it, scalar};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kNMS, inferNMS);

}  // namespace kiln::ir
