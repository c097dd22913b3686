// Reference kernel of SoftMax over one axis: exp(x - max) / sum(exp(x - max)) in fp64 (numerically stable).
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

Status runSoftMax(std::string const& who, bool hasAxis, int64_t axisAttr, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (!dimsEqual(x.shape, y.shape))
    return invalidArgument(who, ": y must have x's shape");
  int64_t a = hasAxis ? axisAttr : (rank >= 3 ? rank - 3 : 0);
  auto axis = normalizeAxis(a, rank);
  if (!axis)
    return invalidArgument(who, ": axis ", a, " is out of range for ", dimsToString(x.shape));
  int64_t outer = 1, inner = 1, len = x.shape.d[*axis];
  for (int32_t d = 0; d < *axis; ++d)
    outer *= x.shape.d[d];
  for (int32_t d = *axis + 1; d < rank; ++d)
    inner *= x.shape.d[d];
  std::vector<double> v(static_cast<size_t>(len));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * len * inner + in;
      double mx = -INFINITY;
      for (int64_t i = 0; i < len; ++i) {
        v[i] = loadAsDouble(x, base + i * inner);
        if (v[i] > mx || std::isnan(v[i])) {
          if (!std::isnan(mx))
            mx = v[i];
        }
      }
      double sum = 0.0;
      for (int64_t i = 0; i < len; ++i) {
        v[i] = std::exp(v[i] - mx);
        sum += v[i];
      }
      for (int64_t i = 0; i < len; ++i)
        storeFromDouble(y, base + i * inner, v[i] / sum);
    }
  }
  return Status::ok();
}

Tactic softMaxTactic() {
  return makeTactic(
      "softmax_reference", OpType::kSoftMax,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string who = node.describe();
        bool hasAxis = node.attrs.has("axis");
        int64_t axis = node.attrs.getInt("axis", 0);
        return makeKernel(
            [who, hasAxis, axis](LaunchContext const& ctx) { return runSoftMax(who, hasAxis, axis, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 && isComputeFloat(in[0].dtype) && isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(softMaxTactic);

}  // namespace
}  // namespace kiln::backends::reference
