// Reference kernel of Normalization: (x - mean) / sqrt(var + eps) * scale + bias with the mean and population
// variance over `axes` (layer / instance norm), or over each channel group and `axes` (group norm, num_groups > 1;
// scale/bias per group for addNormalization, per channel for addNormalizationV2), of x or of x + residual (the
// optional fourth input the builder fuses); fp64, two-pass variance.
#include <cmath>
#include <vector>

#include "backends/normalization_view.h"
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

struct NormParams {
  std::string who;
  std::vector<int64_t> axes;
  double epsilon = 1e-5;
  int64_t groups = 1;
  bool v2 = false;
};

// Offsets sum(coord[d] * strides[d]) over the dims d with mask[d] == select, in row-major order of those dims.
std::vector<int64_t> offsets(std::vector<int64_t> const& shape, std::vector<bool> const& mask, bool select,
                             std::vector<int64_t> const& strides) {
  std::vector<size_t> dims;
  int64_t total = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (mask[d] == select) {
      dims.push_back(d);
      total *= shape[d];
    }
  std::vector<int64_t> r;
  r.reserve(static_cast<size_t>(std::max<int64_t>(0, total)));
  std::vector<int64_t> coord(dims.size(), 0);
  int64_t off = 0;
  for (int64_t i = 0; i < total; ++i) {
    r.push_back(off);
    for (size_t j = dims.size(); j-- > 0;) {
      size_t d = dims[j];
      if (++coord[j] < shape[d]) {
        off += strides[d];
        break;
      }
      off -= strides[d] * (shape[d] - 1);
      coord[j] = 0;
    }
  }
  return r;
}

Status runNorm(NormParams const& np, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& scale = ctx.inputs[1];
  TensorView const& bias = ctx.inputs[2];
  TensorView const& y = ctx.outputs[0];
  if (!dimsEqual(x.shape, y.shape))
    return invalidArgument(np.who, ": y must have x's shape");
  TensorView const* residual = ctx.inputs.size() > 3 && ctx.inputs[3].data ? &ctx.inputs[3] : nullptr;
  if (residual && !dimsEqual(residual->shape, x.shape))
    return invalidArgument(np.who, ": residual ", dimsToString(residual->shape), " must have x's shape ",
                           dimsToString(x.shape));
  KILN_ASSIGN_OR_RETURN(NormalizationView view,
                        normalizationView(np.who, x.shape, scale.shape, bias.shape, np.axes, np.groups, np.v2));
  std::vector<int64_t> const& shape = view.shape;
  std::vector<bool> const& mask = view.reduced;
  std::vector<int64_t> const &xStrides = view.xStrides, &sStrides = view.scaleStrides, &bStrides = view.biasStrides;
  std::vector<int64_t> outerX = offsets(shape, mask, false, xStrides), innerX = offsets(shape, mask, true, xStrides);
  std::vector<int64_t> outerS = offsets(shape, mask, false, sStrides), innerS = offsets(shape, mask, true, sStrides);
  std::vector<int64_t> outerB = offsets(shape, mask, false, bStrides), innerB = offsets(shape, mask, true, bStrides);
  if (x.count() == 0)
    return Status::ok();
  double count = static_cast<double>(innerX.size());
  std::vector<double> vals(innerX.size());
  for (size_t o = 0; o < outerX.size(); ++o) {
    double sum = 0.0;
    for (size_t i = 0; i < innerX.size(); ++i) {
      vals[i] = loadAsDouble(x, outerX[o] + innerX[i]);
      if (residual)
        vals[i] += loadAsDouble(*residual, outerX[o] + innerX[i]);
      sum += vals[i];
    }
    double mean = sum / count;
    double sq = 0.0;
    for (double v : vals)
      sq += (v - mean) * (v - mean);
    double inv = 1.0 / std::sqrt(sq / count + np.epsilon);
    for (size_t i = 0; i < innerX.size(); ++i) {
      double s = loadAsDouble(scale, outerS[o] + innerS[i]);
      double b = loadAsDouble(bias, outerB[o] + innerB[i]);
      storeFromDouble(y, outerX[o] + innerX[i], (vals[i] - mean) * inv * s + b);
    }
  }
  return Status::ok();
}

Tactic normalizationTactic() {
  return makeTactic(
      "normalization_reference", OpType::kNormalization,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        NormParams np;
        np.who = node.describe();
        np.axes = node.attrs.getInts("axes");
        if (np.axes.empty())
          return invalidGraph(node.describe(), ": attribute 'axes' is empty");
        np.epsilon = node.attrs.getFloat("epsilon", 1e-5);
        np.groups = node.attrs.getInt("num_groups", 1);
        if (np.groups < 1)
          return invalidGraph(node.describe(), ": num_groups must be >= 1");
        np.v2 = node.attrs.getInt("v2", 0) != 0;
        return makeKernel([np](LaunchContext const& ctx) { return runNorm(np, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        if (in.size() < 3 || in.size() > 4 || out.size() != 1)
          return false;
        for (auto const& t : in)
          if (t.shape.nbDims >= 0 && !isComputeFloat(t.dtype))
            return false;
        return isComputeFloat(out[0].dtype);
      });
}

KILN_REGISTER_TACTIC(normalizationTactic);

}  // namespace
}  // namespace kiln::backends::reference
