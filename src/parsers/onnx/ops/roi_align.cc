// ONNX RoiAlign (mode avg, sampling_ratio > 0), composed from public layers: each region's image is gathered by
// batch index, its sampling points (sampling_ratio per bin and axis, at (k + 0.5) / sampling_ratio of a bin) are
// read with a bilinear, border-clamped, corner-aligned IGridSampleLayer (the clamp is RoiAlign's own for points
// within one pixel outside the image), points further out are masked to zero, and each bin averages its points.
#include <cstring>
#include <string>
#include <vector>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/composition_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;
using Op = ElementWiseOperation;

/// Column `c` of the [R, 4] rois as [R, 1].
Result<ITensor*> roiColumn(ImportContext& ctx, Node const& node, ITensor* rois, int64_t c) {
  KO_ASSIGN_OR_RETURN(ITensor * idx, ctx.int64Tensor({c}, node.name() + "_roi_col" + std::to_string(c)));
  IGatherLayer* g = ctx.network().addGather(*rois, *idx, 1);
  KO_RETURN_IF_ERROR(ctx.check(g, node, "roi_column"));
  return g->getOutput(0);
}

/// Sampling coordinates along one axis, [R, P] (P = bins * ratio), and their validity mask (float, 1 where the
/// point lies within [-1, extent]), normalized to [-1, 1] for align_corners.
struct Axis {
  ITensor* grid = nullptr;
  ITensor* valid = nullptr;
};
Result<Axis> sampleAxis(ImportContext& ctx, Node const& node, ITensor* start, ITensor* end, int64_t bins, int64_t ratio,
                        int64_t extent, bool clampSize) {
  int64_t const p = bins * ratio;
  KO_ASSIGN_OR_RETURN(ITensor * size, compose::binary(ctx, node, end, start, Op::kSUB));
  if (clampSize) {
    KO_ASSIGN_OR_RETURN(ITensor * one, compose::scalar(ctx, node, DataType::kFLOAT, 1, "_one"));
    KO_ASSIGN_OR_RETURN(size, compose::binary(ctx, node, size, one, Op::kMAX));
  }
  KO_ASSIGN_OR_RETURN(ITensor * perPoint,
                      compose::scalar(ctx, node, DataType::kFLOAT, 1.0 / static_cast<double>(p), "_per_point"));
  KO_ASSIGN_OR_RETURN(ITensor * step, compose::binary(ctx, node, size, perPoint, Op::kPROD));  // [R, 1]
  KO_ASSIGN_OR_RETURN(Constant * offs, ctx.newConstant(DataType::kFLOAT, Dims{2, {1, p}}));
  for (int64_t i = 0; i < p; ++i) {
    float const v = static_cast<float>(i) + 0.5F;
    std::memcpy(offs->bytes.data() + i * 4, &v, 4);
  }
  KO_ASSIGN_OR_RETURN(ITensor * offsT, ctx.constantTensor(offs, node.name() + "_offsets"));
  KO_ASSIGN_OR_RETURN(ITensor * pos, compose::binary(ctx, node, offsT, step, Op::kPROD));
  KO_ASSIGN_OR_RETURN(pos, compose::binary(ctx, node, pos, start, Op::kSUM));  // [R, P] pixel coordinates
  KO_ASSIGN_OR_RETURN(ITensor * lo, compose::scalar(ctx, node, DataType::kFLOAT, -1, "_lo"));
  KO_ASSIGN_OR_RETURN(ITensor * hi, compose::scalar(ctx, node, DataType::kFLOAT, static_cast<double>(extent), "_hi"));
  KO_ASSIGN_OR_RETURN(ITensor * below, compose::binary(ctx, node, pos, lo, Op::kLESS));
  KO_ASSIGN_OR_RETURN(ITensor * above, compose::binary(ctx, node, pos, hi, Op::kGREATER));
  KO_ASSIGN_OR_RETURN(ITensor * out, compose::binary(ctx, node, below, above, Op::kOR));
  KO_ASSIGN_OR_RETURN(ITensor * in, compose::unary(ctx, node, out, UnaryOperation::kNOT));
  Axis a;
  KO_ASSIGN_OR_RETURN(a.valid, compose::cast(ctx, node, in, DataType::kFLOAT));
  // align_corners: pixel 0 -> -1, pixel extent - 1 -> 1 (a single pixel maps everything onto it).
  double const scale = extent > 1 ? 2.0 / static_cast<double>(extent - 1) : 0.0;
  KO_ASSIGN_OR_RETURN(ITensor * s, compose::scalar(ctx, node, DataType::kFLOAT, scale, "_norm"));
  KO_ASSIGN_OR_RETURN(ITensor * m1, compose::scalar(ctx, node, DataType::kFLOAT, extent > 1 ? -1.0 : 0.0, "_shift"));
  KO_ASSIGN_OR_RETURN(a.grid, compose::binary(ctx, node, pos, s, Op::kPROD));
  KO_ASSIGN_OR_RETURN(a.grid, compose::binary(ctx, node, a.grid, m1, Op::kSUM));
  return a;
}

Status importRoiAlign(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * rois, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * batch, ctx.tensor(node, 2));
  KO_ASSIGN_OR_RETURN(std::string mode, attrString(node, "mode", "avg"));
  KO_ASSIGN_OR_RETURN(int64_t oh, attrInt(node, "output_height", 1));
  KO_ASSIGN_OR_RETURN(int64_t ow, attrInt(node, "output_width", 1));
  KO_ASSIGN_OR_RETURN(int64_t ratio, attrInt(node, "sampling_ratio", 0));
  KO_ASSIGN_OR_RETURN(float spatialScale, attrFloat(node, "spatial_scale", 1.0F));
  KO_ASSIGN_OR_RETURN(std::string ctm, attrString(node, "coordinate_transformation_mode",
                                                  ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel"));
  if (mode != "avg") {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node, "mode '", mode,
                                    "' is not supported (avg only)");
  }
  if (ratio <= 0) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_ATTR, node,
                                    "adaptive sampling (sampling_ratio 0) is not supported yet");
  }
  if (ctm != "half_pixel" && ctm != "output_half_pixel") {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "coordinate_transformation_mode '", ctm,
                                    "' is invalid");
  }
  if (oh <= 0 || ow <= 0 || oh * ratio > 4096 || ow * ratio > 4096) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid output size or sampling ratio");
  }
  Dims const xd = x->getDimensions();
  if (xd.nbDims != 4 || xd.d[1] < 0 || xd.d[2] < 0 || xd.d[3] < 0 || x->getType() != DataType::kFLOAT) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE, node,
                                    "needs a float32 X [N, C, H, W] with static C, H, W, got ", dimsString(xd));
  }
  KO_ASSIGN_OR_RETURN(ITensor * scaleT, compose::scalar(ctx, node, DataType::kFLOAT, spatialScale, "_scale"));
  KO_ASSIGN_OR_RETURN(ITensor * r, compose::binary(ctx, node, rois, scaleT, Op::kPROD));
  if (ctm == "half_pixel") {
    KO_ASSIGN_OR_RETURN(ITensor * half, compose::scalar(ctx, node, DataType::kFLOAT, 0.5, "_half"));
    KO_ASSIGN_OR_RETURN(r, compose::binary(ctx, node, r, half, Op::kSUB));
  }
  bool const clampSize = ctm == "output_half_pixel";
  KO_ASSIGN_OR_RETURN(ITensor * x1, roiColumn(ctx, node, r, 0));
  KO_ASSIGN_OR_RETURN(ITensor * y1, roiColumn(ctx, node, r, 1));
  KO_ASSIGN_OR_RETURN(ITensor * x2, roiColumn(ctx, node, r, 2));
  KO_ASSIGN_OR_RETURN(ITensor * y2, roiColumn(ctx, node, r, 3));
  KO_ASSIGN_OR_RETURN(Axis ya, sampleAxis(ctx, node, y1, y2, oh, ratio, xd.d[2], clampSize));  // [R, P]
  KO_ASSIGN_OR_RETURN(Axis xa, sampleAxis(ctx, node, x1, x2, ow, ratio, xd.d[3], clampSize));  // [R, Q]
  int64_t const p = oh * ratio, q = ow * ratio;
  // grid [R, P, Q, 2] of (x, y): each coordinate broadcast over the other axis.
  KO_ASSIGN_OR_RETURN(ITensor * gx, reshape(ctx, node, xa.grid, Dims{4, {-1, 1, q, 1}}));
  KO_ASSIGN_OR_RETURN(ITensor * gy, reshape(ctx, node, ya.grid, Dims{4, {-1, p, 1, 1}}));
  KO_ASSIGN_OR_RETURN(ITensor * zero, compose::scalar(ctx, node, DataType::kFLOAT, 0, "_zero"));
  KO_ASSIGN_OR_RETURN(ITensor * gx0, compose::binary(ctx, node, gx, zero, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * gy0, compose::binary(ctx, node, gy, zero, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * gxFull, compose::binary(ctx, node, gx, gy0, Op::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * gyFull, compose::binary(ctx, node, gy, gx0, Op::kSUM));
  ITensor* parts[] = {gxFull, gyFull};
  IConcatenationLayer* cat = ctx.network().addConcatenation(parts, 2);
  KO_RETURN_IF_ERROR(ctx.check(cat, node, "grid"));
  cat->setAxis(3);
  KO_ASSIGN_OR_RETURN(ITensor * b64, compose::cast(ctx, node, batch, DataType::kINT64));
  IGatherLayer* images = ctx.network().addGather(*x, *b64, 0);
  KO_RETURN_IF_ERROR(ctx.check(images, node, "images"));
  IGridSampleLayer* gs = ctx.network().addGridSample(*images->getOutput(0), *cat->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.check(gs, node, "sample"));
  gs->setInterpolationMode(InterpolationMode::kLINEAR);
  gs->setAlignCorners(true);
  gs->setSampleMode(SampleMode::kCLAMP);
  // Mask points outside [-1, extent] on either axis: valid[R, 1, P, Q].
  KO_ASSIGN_OR_RETURN(ITensor * vy, reshape(ctx, node, ya.valid, Dims{4, {-1, 1, p, 1}}));
  KO_ASSIGN_OR_RETURN(ITensor * vx, reshape(ctx, node, xa.valid, Dims{4, {-1, 1, 1, q}}));
  KO_ASSIGN_OR_RETURN(ITensor * valid, compose::binary(ctx, node, vy, vx, Op::kPROD));
  KO_ASSIGN_OR_RETURN(ITensor * samples, compose::binary(ctx, node, gs->getOutput(0), valid, Op::kPROD));
  // [R, C, P, Q] -> [R, C, oh, ratio, ow, ratio] -> mean over the ratio axes.
  KO_ASSIGN_OR_RETURN(ITensor * bins, reshape(ctx, node, samples, Dims{6, {-1, xd.d[1], oh, ratio, ow, ratio}}));
  IReduceLayer* mean = ctx.network().addReduce(*bins, ReduceOperation::kAVG, (1U << 3U) | (1U << 5U), false);
  KO_RETURN_IF_ERROR(ctx.check(mean, node, "bin_mean"));
  return ctx.setOutput(node, 0, mean->getOutput(0));
}

KILN_ONNX_REGISTER("", "RoiAlign", importRoiAlign);

}  // namespace
}  // namespace kiln::onnx
