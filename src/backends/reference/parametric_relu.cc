// Reference kernel of ParametricReLU: y = x >= 0 ? x : slope * x with the slope broadcast to x; fp64 math.
#include <array>
#include <vector>

#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

using ir::OpType;

bool isFloatOrDouble(DataType t) { return isComputeFloat(t) || t == DataType::kFLOAT64; }

Status runParametricReLU(std::string const& who, LaunchContext const& ctx) {
  TensorView const& x = ctx.inputs[0];
  TensorView const& s = ctx.inputs[1];
  TensorView const& y = ctx.outputs[0];
  if (!dimsEqual(x.shape, y.shape) || s.shape.nbDims > x.shape.nbDims)
    return invalidArgument(who, ": y must have x's shape and the slope at most x's rank");
  for (int32_t i = 0; i < s.shape.nbDims; ++i) {
    int64_t sd = s.shape.d[s.shape.nbDims - 1 - i], xd = x.shape.d[x.shape.nbDims - 1 - i];
    if (sd != 1 && sd != xd)
      return invalidArgument(who, ": slope ", dimsToString(s.shape), " does not broadcast to ", dimsToString(x.shape));
  }
  std::array<std::vector<int64_t>, 1> strides{broadcastStrides(s.shape, y.shape)};
  forEachIndex(y.shape, strides, [&](int64_t lin, std::array<int64_t, 1> const& off) {
    double v = loadAsDouble(x, lin);
    storeFromDouble(y, lin, v >= 0.0 ? v : loadAsDouble(s, off[0]) * v);
  });
  return Status::ok();
}

Tactic parametricReLUTactic() {
  return makeTactic(
      "parametric_relu_reference", OpType::kParametricReLU,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        std::string who = node.describe();
        return makeKernel([who](LaunchContext const& ctx) { return runParametricReLU(who, ctx); });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 2 && out.size() == 1 && isFloatOrDouble(in[0].dtype) && in[1].dtype == in[0].dtype &&
               out[0].dtype == in[0].dtype;
      });
}

KILN_REGISTER_TACTIC(parametricReLUTactic);

}  // namespace
}  // namespace kiln::backends::reference
