// Shape inference of GridSample (TensorRT's IGridSampleLayer, ONNX GridSample): x [N, C, H, W], grid
// [N, H_out, W_out, 2] of any float type; y = [N, C, H_out, W_out]. Kiln extension: volumetric x [N, C, D, H, W],
// grid [N, D_out, H_out, W_out, 3] -> y [N, C, D_out, H_out, W_out] (linear or nearest, as ONNX opset 20).
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferGridSample(InferContext& ctx) {
  if (ctx.numInputs() != 2 || !ctx.present(0) || !ctx.present(1)) return ctx.error("needs inputs x and grid");
  Dims const& x = ctx.in[0].shape;
  Dims const& g = ctx.in[1].shape;
  if (x.nbDims != 4 && x.nbDims != 5)
    return ctx.error("input must have shape [N, C, H, W] or [N, C, D, H, W], got ", dimsToString(x));
  int32_t const r = x.nbDims;
  if (g.nbDims != r || (g.d[r - 1] >= 0 && g.d[r - 1] != r - 2) || (g.d[0] >= 0 && x.d[0] >= 0 && g.d[0] != x.d[0]))
    return ctx.error("grid must have shape [N, H_out, W_out, 2] (or [N, D_out, H_out, W_out, 3]) with the input's "
                     "N, got ", dimsToString(g), " for input ", dimsToString(x));
  DataType gt = ctx.in[1].dtype;  // the grid may keep its own float type (ONNX's T2) when x's precision changes
  if (gt != DataType::kFLOAT && gt != DataType::kHALF && gt != DataType::kBF16 && gt != DataType::kFLOAT64)
    return ctx.error("grid must have a float type, got ", dataTypeName(gt));
  int64_t mode = ctx.node.attrs.getInt("mode", static_cast<int64_t>(InterpolationMode::kLINEAR));
  if (mode < 0 || mode >= EnumMax<InterpolationMode>()) return ctx.error("unknown interpolation mode ", mode);
  auto sm = static_cast<SampleMode>(ctx.node.attrs.getInt("sample_mode", static_cast<int64_t>(SampleMode::kFILL)));
  if (sm != SampleMode::kFILL && sm != SampleMode::kCLAMP && sm != SampleMode::kREFLECT)
    return ctx.error("sample_mode ", static_cast<int32_t>(sm), " is not kFILL, kCLAMP or kREFLECT");
  if (r == 5 && mode == static_cast<int64_t>(InterpolationMode::kCUBIC))
    return ctx.error("cubic sampling of a volume is not defined (ONNX: 4-D input only)");
  Dims y = x;
  y.d[0] = x.d[0] >= 0 ? x.d[0] : g.d[0];
  for (int32_t i = 2; i < r; ++i) y.d[i] = g.d[i - 1];
  ctx.out[0] = {ctx.in[0].dtype, y};
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kGridSample, inferGridSample);

}  // namespace kiln::ir
