// Shape inference of Normalization (TensorRT's INormalizationLayer: layer, instance and group norm). For group
// norm (num_groups > 1, channel axis 1) scale and bias are [1, G, 1, ...] with addNormalization (v2 = 0) and
// [1, C, 1, ...] with addNormalizationV2 (v2 = 1); otherwise they broadcast to x. An optional fourth input, the
// residual the builder fuses, has x's shape and type. y has x's shape and type.
#include <vector>

#include "ir/shape_inference.h"

namespace kiln::ir {
namespace {

Status inferNormalization(InferContext& ctx) {
  if (ctx.numInputs() < 3 || ctx.numInputs() > 4 || !ctx.present(0) || !ctx.present(1) || !ctx.present(2))
    return ctx.error("needs inputs x, scale and bias, and optionally a residual");
  Dims const& x = ctx.in[0].shape;
  if (ctx.numInputs() == 4 && ctx.present(3)) {
    Dims const& r = ctx.in[3].shape;
    bool same = r.nbDims == x.nbDims && ctx.in[3].dtype == ctx.in[0].dtype;
    for (int32_t d = 0; same && d < x.nbDims; ++d)
      same = r.d[d] < 0 || x.d[d] < 0 || r.d[d] == x.d[d];
    if (!same)
      return ctx.error("residual ", dimsToString(r), " (", dataTypeName(ctx.in[3].dtype), ") must have x's shape ",
                       dimsToString(x), " and type ", dataTypeName(ctx.in[0].dtype));
  }
  int32_t rank = x.nbDims;
  if (rank < 1)
    return ctx.error("input must have rank >= 1, got ", dimsToString(x));
  std::vector<int64_t> axes = ctx.node.attrs.getInts("axes");
  if (axes.empty())
    return ctx.error("attribute 'axes' is empty");
  int64_t groups = ctx.node.attrs.getInt("num_groups", 1);
  if (groups < 1)
    return ctx.error("num_groups = ", groups, " must be >= 1");
  double eps = ctx.node.attrs.getFloat("epsilon", 1e-5);
  if (!(eps >= 0.0))
    return ctx.error("epsilon = ", eps, " must be >= 0");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    auto axis = normalizeAxis(a, rank);
    if (!axis)
      return ctx.error("axis ", a, " is out of range for ", dimsToString(x));
    if (seen[*axis])
      return ctx.error("axis ", a, " is listed twice");
    if (groups > 1 && *axis < 2)
      return ctx.error("group normalization reduces over spatial axes (>= 2), not axis ", a);
    seen[*axis] = true;
  }
  if (groups > 1) {
    if (rank < 3)
      return ctx.error("group normalization needs rank >= 3 ([N, C, spatial...]), got ", dimsToString(x));
    int64_t c = x.d[1];
    if (c >= 0 && c % groups != 0)
      return ctx.error(c, " channels are not divisible by num_groups = ", groups);
    bool v2 = ctx.node.attrs.getInt("v2", 0) != 0;
    int64_t want = v2 ? c : groups;
    for (size_t i = 1; i < 3; ++i) {
      Dims const& s = ctx.in[i].shape;
      bool ok = s.nbDims == rank;
      for (int32_t d = 0; ok && d < rank; ++d) {
        int64_t need = d == 1 ? want : 1;
        if (s.d[d] >= 0 && need >= 0 && s.d[d] != need)
          ok = false;
      }
      if (!ok)
        return ctx.error(i == 1 ? "scale " : "bias ", dimsToString(s), " must be [1, ", v2 ? "C" : "G", "=", want,
                         ", 1...] for group normalization", v2 ? " (V2)" : "");
    }
  } else {
    for (size_t i = 1; i < 3; ++i) {
      Dims const& s = ctx.in[i].shape;
      bool ok = s.nbDims <= rank;
      for (int32_t d = 0; ok && d < s.nbDims; ++d) {
        int64_t sd = s.d[d], xd = x.d[rank - s.nbDims + d];
        if (sd >= 0 && sd != 1 && xd >= 0 && sd != xd)
          ok = false;
      }
      if (!ok)
        return ctx.error(i == 1 ? "scale " : "bias ", dimsToString(s), " does not broadcast to ", dimsToString(x));
    }
  }
  ctx.out[0] = ctx.in[0];
  return Status::ok();
}

}  // namespace

KILN_REGISTER_INFER(kNormalization, inferNormalization);

}  // namespace kiln::ir
