// Reference kernel of RaggedSoftMax: softmax (fp64, max-subtracted) over the first bounds[z] elements of each
// row z of x; the elements past the bound are 0. A bound outside [0, S] is an error.
#include <cmath>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

Status runRaggedSoftMax(std::string const& who, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& bounds = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  int32_t rank = x.shape.nbDims;
  if (!dimsEqual(x.shape, y.shape) || rank < 1 || bounds.dtype != DataType::kINT32)
    return invalidArgument(who, ": y must have x's shape and bounds must be int32");
  int64_t s = x.shape.d[rank - 1];
  int64_t rows = s == 0 ? 0 : x.count() / s;
  if (s > 0 && bounds.count() != rows)
    return invalidArgument(who, ": bounds ", dimsToString(bounds.shape), " must hold one value per row of ",
                           dimsToString(x.shape));
  std::vector<double> v(static_cast<size_t>(s));
  for (int64_t z = 0; z < rows; ++z) {
    int64_t b = loadAsInt(bounds, z);
    if (b < 0 || b > s) return invalidArgument(who, ": bound ", b, " of row ", z, " is outside [0, ", s, "]");
    double mx = -INFINITY;
    for (int64_t i = 0; i < b; ++i) {
      v[i] = loadAsDouble(x, z * s + i);
      mx = std::max(mx, v[i]);
    }
    double sum = 0.0;
    for (int64_t i = 0; i < b; ++i) {
      v[i] = std::exp(v[i] - mx);
      sum += v[i];
    }
    for (int64_t i = 0; i < s; ++i) storeFromDouble(y, z * s + i, i < b ? v[i] / sum : 0.0);
  }
  return Status::ok();
}

Tactic raggedSoftMaxTactic() {
  return makeTactic(
      "ragged_softmax_reference", OpType::kRaggedSoftMax,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string who = node.describe();
        return makeKernel([who](LaunchContext const& ctx) { return runRaggedSoftMax(who, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 2 && out.size() == 1 &&
               (isComputeFloat(in[0].dtype) || in[0].dtype == DataType::kFLOAT64) && out[0].dtype == in[0].dtype &&
               in[1].dtype == DataType::kINT32;
      });
}

KILN_REGISTER_TACTIC(raggedSoftMaxTactic);

}  // namespace
}  // namespace kiln::backends::reference
