// ONNX DeformConv (opset 19), 2-D: a convolution whose taps sample the input at learned fractional offsets
// (bilinear, zero outside), optionally scaled by a mask. Composed from public layers: the sampling positions
// (output position * stride - pad + tap * dilation + offset) become a GridSample grid (align_corners 0, zeros
// padding: the same bilinear rule, exact in fp64 accumulation), one GridSample per offset group gathers the
// [C, taps, positions] columns, the mask multiplies them, and a batched matrix multiply with the weights
// [groups, M / groups, C / groups * taps] (plus the bias) is the convolution.
#include <cstring>

#include "parsers/onnx/import_context.h"
#include "parsers/onnx/ops/compose_util.h"

namespace kiln::onnx {
namespace {

using Node = ::onnx::NodeProto;

Result<ITensor*> sliceAxis(ImportContext& ctx, Node const& node, ITensor* t, int32_t axis, int64_t start) {
  Dims const d = t->getDimensions();
  Dims st{d.nbDims, {}}, sz = d, stride{d.nbDims, {}};
  for (int32_t i = 0; i < d.nbDims; ++i) stride.d[i] = 1;
  st.d[axis] = start;
  sz.d[axis] = 1;
  ISliceLayer* l = ctx.network().addSlice(*t, st, sz, stride);
  KO_RETURN_IF_ERROR(ctx.check(l, node, "deform_conv_offset"));
  return l->getOutput(0);
}

Status importDeformConv(ImportContext& ctx, Node const& node) {
  KO_ASSIGN_OR_RETURN(ITensor * x, ctx.tensor(node, 0));
  KO_ASSIGN_OR_RETURN(ITensor * w, ctx.tensor(node, 1));
  KO_ASSIGN_OR_RETURN(ITensor * offset, ctx.tensor(node, 2));
  Dims const xd = x->getDimensions(), wd = w->getDimensions(), od = offset->getDimensions();
  if (xd.nbDims != 4 || wd.nbDims != 4 || od.nbDims != 4) {
    return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_SHAPE, node,
                                    "only 2-D DeformConv (rank-4 X, W and offset) is supported");
  }
  for (Dims const* d : {&xd, &wd, &od}) {
    for (int32_t i = 0; i < 4; ++i) {
      if (d->d[i] < 0) {
        return ImportContext::nodeError(ErrorCode::kUNSUPPORTED_NODE_DYNAMIC, node, "needs static shapes");
      }
    }
  }
  int64_t const n = xd.d[0], c = xd.d[1], h = xd.d[2], wi = xd.d[3], m = wd.d[0];
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> k, attrInts(node, "kernel_shape", {wd.d[2], wd.d[3]}));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> st, attrInts(node, "strides", {1, 1}));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attrInts(node, "pads", {0, 0, 0, 0}));
  KO_ASSIGN_OR_RETURN(std::vector<int64_t> dil, attrInts(node, "dilations", {1, 1}));
  KO_ASSIGN_OR_RETURN(int64_t groups, attrInt(node, "group", 1));
  KO_ASSIGN_OR_RETURN(int64_t og, attrInt(node, "offset_group", 1));
  if (k.size() != 2 || st.size() != 2 || pads.size() != 4 || dil.size() != 2 || k[0] != wd.d[2] || k[1] != wd.d[3]) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "kernel_shape/strides/pads/dilations do not ",
                                    "describe a 2-D kernel of W ", dimsString(wd));
  }
  if (groups <= 0 || og <= 0 || c % groups != 0 || m % groups != 0 || c % og != 0 || wd.d[1] != c / groups) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "group ", groups, " / offset_group ", og,
                                    " do not divide the channels of X ", dimsString(xd), " and W ", dimsString(wd));
  }
  int64_t out[2] = {0, 0};
  int64_t const in[2] = {h, wi};
  for (int i = 0; i < 2; ++i) {
    if (k[i] <= 0 || st[i] <= 0 || dil[i] <= 0 || pads[i] < 0 || pads[i + 2] < 0 || in[i] <= 0) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "invalid kernel, stride, dilation or pad");
    }
    int64_t const span = dil[i] * (k[i] - 1) + 1;
    int64_t const padded = in[i] + pads[i] + pads[i + 2];
    if (padded < span) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "the kernel is larger than the padded input");
    }
    out[i] = (padded - span) / st[i] + 1;
  }
  int64_t const oh = out[0], ow = out[1], taps = k[0] * k[1], positions = oh * ow;
  if (od.d[0] != n || od.d[1] != og * taps * 2 || od.d[2] != oh || od.d[3] != ow) {
    return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "offset ", dimsString(od), " should be [", n, ", ",
                                    og * taps * 2, ", ", oh, ", ", ow, "]");
  }
  DataType const t = x->getType();
  // Grid coordinates for GridSample's align_corners = 0: g = (2 * p + 1) / extent - 1 with p = base + offset,
  // i.e. offset * (2 / extent) + base term; the base terms are constants [1, 1, taps, 1, oh, ow].
  Dims const bd{6, {1, 1, taps, 1, oh, ow}};
  KO_ASSIGN_OR_RETURN(Constant * bx, ctx.newConstant(DataType::kFLOAT64, bd));
  KO_ASSIGN_OR_RETURN(Constant * by, ctx.newConstant(DataType::kFLOAT64, bd));
  for (int64_t tap = 0; tap < taps; ++tap) {
    int64_t const ki = tap / k[1], kj = tap % k[1];
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        double const py = static_cast<double>(oy * st[0] - pads[0] + ki * dil[0]);
        double const px = static_cast<double>(ox * st[1] - pads[1] + kj * dil[1]);
        double const gy = (2.0 * py + 1.0) / static_cast<double>(h) - 1.0;
        double const gx = (2.0 * px + 1.0) / static_cast<double>(wi) - 1.0;
        int64_t const at = (tap * oh + oy) * ow + ox;
        std::memcpy(by->bytes.data() + at * 8, &gy, 8);
        std::memcpy(bx->bytes.data() + at * 8, &gx, 8);
      }
    }
  }
  KO_ASSIGN_OR_RETURN(ITensor * bxt, ctx.constantTensor(bx, node.name() + "_base_x"));
  KO_ASSIGN_OR_RETURN(ITensor * byt, ctx.constantTensor(by, node.name() + "_base_y"));
  KO_ASSIGN_OR_RETURN(bxt, cast(ctx, node, bxt, t));
  KO_ASSIGN_OR_RETURN(byt, cast(ctx, node, byt, t));
  KO_ASSIGN_OR_RETURN(ITensor * sx, scalar(ctx, node, t, 2.0 / static_cast<double>(wi)));
  KO_ASSIGN_OR_RETURN(ITensor * sy, scalar(ctx, node, t, 2.0 / static_cast<double>(h)));
  // offset channels are (group, tap, (dy, dx)).
  KO_ASSIGN_OR_RETURN(ITensor * off, reshape(ctx, node, offset, Dims{6, {n, og, taps, 2, oh, ow}}, false));
  KO_ASSIGN_OR_RETURN(ITensor * dy, sliceAxis(ctx, node, off, 3, 0));
  KO_ASSIGN_OR_RETURN(ITensor * dx, sliceAxis(ctx, node, off, 3, 1));
  KO_ASSIGN_OR_RETURN(ITensor * gx, elementwise(ctx, node, dx, sx, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(gx, elementwise(ctx, node, gx, bxt, ElementWiseOperation::kSUM));
  KO_ASSIGN_OR_RETURN(ITensor * gy, elementwise(ctx, node, dy, sy, ElementWiseOperation::kPROD));
  KO_ASSIGN_OR_RETURN(gy, elementwise(ctx, node, gy, byt, ElementWiseOperation::kSUM));
  ITensor* pair[2] = {gx, gy};
  IConcatenationLayer* cat = ctx.network().addConcatenation(pair, 2);
  KO_RETURN_IF_ERROR(ctx.check(cat, node, "deform_conv_grid"));
  cat->setAxis(3);
  IShuffleLayer* gridLayer = ctx.network().addShuffle(*cat->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.check(gridLayer, node, "deform_conv_grid_layout"));
  gridLayer->setFirstTranspose(Permutation{{0, 1, 2, 4, 5, 3}});
  gridLayer->setReshapeDimensions(Dims{4, {n * og, taps * oh, ow, 2}});
  KO_ASSIGN_OR_RETURN(ITensor * xg, reshape(ctx, node, x, Dims{4, {n * og, c / og, h, wi}}, false));
  IGridSampleLayer* gs = ctx.network().addGridSample(*xg, *gridLayer->getOutput(0));
  KO_RETURN_IF_ERROR(ctx.check(gs, node, "deform_conv_sample"));
  gs->setInterpolationMode(InterpolationMode::kLINEAR);
  gs->setAlignCorners(false);
  gs->setSampleMode(SampleMode::kFILL);
  // [N * og, C / og, taps * oh, ow] -> [N, og, C / og, taps, positions], times the mask [N, og, 1, taps, positions].
  KO_ASSIGN_OR_RETURN(ITensor * cols,
                      reshape(ctx, node, gs->getOutput(0), Dims{5, {n, og, c / og, taps, positions}}, false));
  if (ImportContext::hasInput(node, 4)) {
    KO_ASSIGN_OR_RETURN(ITensor * mask, ctx.tensor(node, 4));
    Dims const md = mask->getDimensions();
    if (md.nbDims != 4 || md.d[0] != n || md.d[1] != og * taps || md.d[2] != oh || md.d[3] != ow) {
      return ImportContext::nodeError(ErrorCode::kINVALID_NODE, node, "mask ", dimsString(md), " should be [", n, ", ",
                                      og * taps, ", ", oh, ", ", ow, "]");
    }
    KO_ASSIGN_OR_RETURN(mask, reshape(ctx, node, mask, Dims{5, {n, og, 1, taps, positions}}, false));
    KO_ASSIGN_OR_RETURN(cols, elementwise(ctx, node, cols, mask, ElementWiseOperation::kPROD));
  }
  // Columns ordered (channel, tap) as W's [C / groups, kh, kw] flattening.
  KO_ASSIGN_OR_RETURN(cols, reshape(ctx, node, cols, Dims{4, {n, groups, c / groups * taps, positions}}, false));
  KO_ASSIGN_OR_RETURN(ITensor * wm, reshape(ctx, node, w, Dims{4, {1, groups, m / groups, c / groups * taps}}, false));
  IMatrixMultiplyLayer* mm =
      ctx.network().addMatrixMultiply(*wm, MatrixOperation::kNONE, *cols, MatrixOperation::kNONE);
  KO_RETURN_IF_ERROR(ctx.check(mm, node, "deform_conv_matmul"));
  KO_ASSIGN_OR_RETURN(ITensor * y, reshape(ctx, node, mm->getOutput(0), Dims{4, {n, m, oh, ow}}, false));
  if (ImportContext::hasInput(node, 3)) {
    KO_ASSIGN_OR_RETURN(ITensor * b, ctx.tensor(node, 3));
    KO_ASSIGN_OR_RETURN(b, reshape(ctx, node, b, Dims{4, {1, m, 1, 1}}, false));
    KO_ASSIGN_OR_RETURN(y, elementwise(ctx, node, y, b, ElementWiseOperation::kSUM));
  }
  return ctx.setOutput(node, 0, y);
}

KILN_ONNX_REGISTER("", "DeformConv", importDeformConv);

}  // namespace
}  // namespace kiln::onnx
