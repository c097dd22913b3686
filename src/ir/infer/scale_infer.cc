// Shape inference of Scale (TensorRT's IScaleLayer, y = (x * scale + shift) ^ power): y has x's shape and type;
// checks that each present coefficient tensor holds 1 (kUNIFORM), C (kCHANNEL) or C*spatial (kELEMENTWISE) values.
#include "ir/shape_inference.h"
#include "kiln/kiln.h"

namespace kiln::ir {
namespace {

Status inferScale(InferContext& ctx) {
  if (ctx.numInputs() < 1 || ctx.numInputs() > 4 || !ctx.present(0))
    return ctx.error("needs input x, then optional shift, scale and power");
  Dims const& x = ctx.in[0].shape;
  int64_t mode = ctx.node.attrs.getInt("mode", static_cast<int64_t>(ScaleMode::kUNIFORM));
  if (mode < 0 || mode >= EnumMax<ScaleMode>())
    return ctx.error("unknown scale mode ", mode);
  int64_t expected = 1;
  if (mode != static_cast<int64_t>(ScaleMode::kUNIFORM)) {
    if (x.nbDims < 1)
      return ctx.error("a per-channel or elementwise scale needs rank >= 1, got ", dimsToString(x));
    int64_t ca = ctx.node.attrs.getInt("channel_axis", x.nbDims >= 2 ? 1 : 0);
    auto axis = normalizeAxis(ca, x.nbDims);
    if (!axis)
      return ctx.error("channel_axis ", ca, " is out of range for ", dimsToString(x));
    int32_t last = mode == static_cast<int64_t>(ScaleMode::kCHANNEL) ? *axis + 1 : x.nbDims;
    for (int32_t i = *axis; i < last; ++i)
      expected = x.d[i] < 0 || expected < 0 ? -1 : expected * x.d[i];
  }
  char const* names[] = {"", "shift", "scale", "power"};
  for (size_t i = 1; i < ctx.numInputs(); ++i) {
    if (!ctx.present(i))
      continue;
    int64_t n = volume(ctx.in[i].shape);
    if (n >= 0 && expected >= 0 && n != expected)
      return ctx.error(names[i], " has ", n, " values ", dimsToString(ctx.in[i].shape), "; this mode needs ", expected);
  }
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kScale, inferScale);

}  // namespace kiln::ir
