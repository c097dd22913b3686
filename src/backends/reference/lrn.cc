// Reference kernel of LRN (TensorRT's cross-channel formula): y = x / (k + alpha / window * sum of x^2 over
// the channels [c - window/2, c + window/2] that exist) ^ beta; fp64 math.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct LrnParams {
  std::string who;
  int64_t window = 1;
  double alpha = 1, beta = 1, k = 1;
};

Status runLRN(LrnParams const& p, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& y = ctx.outputs[0];
  if (!dimsEqual(x.shape, y.shape) || x.shape.nbDims < 3)
    return invalidArgument(p.who, ": y must have x's shape, of rank >= 3");
  int64_t n = x.shape.d[0], c = x.shape.d[1], inner = 1;
  for (int32_t d = 2; d < x.shape.nbDims; ++d) inner *= x.shape.d[d];
  int64_t half = p.window / 2;
  std::vector<double> sq(static_cast<size_t>(std::max<int64_t>(0, c)));
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t s = 0; s < inner; ++s) {
      for (int64_t ci = 0; ci < c; ++ci) {
        double v = loadAsDouble(x, (b * c + ci) * inner + s);
        sq[ci] = v * v;
      }
      for (int64_t ci = 0; ci < c; ++ci) {
        double sum = 0.0;
        for (int64_t j = std::max<int64_t>(0, ci - half); j <= std::min(c - 1, ci + half); ++j) sum += sq[j];
        int64_t i = (b * c + ci) * inner + s;
        storeFromDouble(y, i,
                        loadAsDouble(x, i) / std::pow(p.k + p.alpha / static_cast<double>(p.window) * sum, p.beta));
      }
    }
  }
  return Status::ok();
}

Tactic lrnTactic() {
  return makeTactic(
      "lrn_reference", OpType::kLRN,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        LrnParams p;
        p.who = node.describe();
        p.window = node.attrs.getInt("window", 0);
        p.alpha = node.attrs.getFloat("alpha", 1.0);
        p.beta = node.attrs.getFloat("beta", 1.0);
        p.k = node.attrs.getFloat("k", 1.0);
        if (p.window < 1 || p.window % 2 == 0)
          return invalidGraph(p.who, ": window = ", p.window, " must be odd and positive");
        return makeKernel([p](LaunchContext const& ctx) { return runLRN(p, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 &&
               (isComputeFloat(in[0].dtype) || in[0].dtype == DataType::kFLOAT64) && out[0].dtype == in[0].dtype;
      });
}

KILN_REGISTER_TACTIC(lrnTactic);

}  // namespace
}  // namespace kiln::backends::reference
