// Reference kernel of Scale: y = (x * scale + shift) ^ power with one coefficient (kUNIFORM), one per channel
// (kCHANNEL, along channel_axis) or one per element of the block from channel_axis on (kELEMENTWISE); an absent
// coefficient is the identity (shift 0, scale 1, power 1). fp64.
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct ScaleParams {
  std::string who;
  ScaleMode mode = ScaleMode::kUNIFORM;
  bool hasAxis = false;
  int64_t channelAxis = 1;
};

Status runScale(ScaleParams const& sp, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  if (!dimsEqual(x.shape, y.shape))
    return invalidArgument(sp.who, ": y must have x's shape");
  int32_t rank = x.shape.nbDims;
  // Coefficient index of element i is (i / inner) % count.
  int64_t count = 1, inner = 1;
  if (sp.mode != ScaleMode::kUNIFORM) {
    int64_t a = sp.hasAxis ? sp.channelAxis : (rank >= 2 ? 1 : 0);
    auto axis = normalizeAxis(a, rank);
    if (!axis)
      return invalidArgument(sp.who, ": channel_axis ", a, " is out of range for ", dimsToString(x.shape));
    count = x.shape.d[*axis];
    for (int32_t d = *axis + 1; d < rank; ++d) {
      if (sp.mode == ScaleMode::kELEMENTWISE)
        count *= x.shape.d[d];
      else
        inner *= x.shape.d[d];
    }
  }
  TensorView const* coef[3] = {nullptr, nullptr, nullptr};  // shift, scale, power
  for (size_t i = 1; i < 4 && i < ctx.inputs.size(); ++i) {
    if (ctx.inputs[i].shape.nbDims < 0)
      continue;  // absent: the identity value
    if (ctx.inputs[i].count() != count)
      return invalidArgument(sp.who, ": coefficient input ", i, " holds ", ctx.inputs[i].count(), " values, needs ",
                             count);
    coef[i - 1] = &ctx.inputs[i];
  }
  int64_t total = x.count();
  for (int64_t i = 0; i < total; ++i) {
    int64_t ci = (i / inner) % count;
    double v = loadAsDouble(x, i);
    if (coef[1])
      v *= loadAsDouble(*coef[1], ci);
    if (coef[0])
      v += loadAsDouble(*coef[0], ci);
    if (coef[2])
      v = std::pow(v, loadAsDouble(*coef[2], ci));
    storeFromDouble(y, i, v);
  }
  return Status::ok();
}

Tactic scaleTactic() {
  return makeTactic(
      "scale_reference", OpType::kScale,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        ScaleParams sp;
        sp.who = node.describe();
        int64_t mode = node.attrs.getInt("mode", 0);
        if (mode < 0 || mode >= EnumMax<ScaleMode>())
          return invalidGraph(node.describe(), ": unknown scale mode ", mode);
        sp.mode = static_cast<ScaleMode>(mode);
        sp.hasAxis = node.attrs.has("channel_axis");
        sp.channelAxis = node.attrs.getInt("channel_axis", 1);
        return makeKernel([sp](LaunchContext const& ctx) { return runScale(sp, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.empty() || in.size() > 4 || out.size() != 1)
          return false;
        for (auto const& t : in)
          if (t.shape.nbDims >= 0 && !isComputeFloat(t.dtype))
            return false;
        return isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(scaleTactic);

}  // namespace
}  // namespace kiln::backends::reference
