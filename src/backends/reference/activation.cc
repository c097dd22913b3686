// Reference kernel of Activation: applyActivation (activation_math.h) per element, computed in double and
// rounded once to the storage type.
#include "backends/reference/activation_math.h"
#include "backends/reference/reference_util.h"

namespace kiln::backends::reference {
namespace {

Tactic activationTactic() {
  return makeTactic(
      "activation_reference", ir::OpType::kActivation,
      [](ir::Node const& node) -> Result<std::unique_ptr<Kernel>> {
        int64_t type = node.attrs.getInt("type", -1);
        if (!isActivationType(type))
          return invalidGraph(node.describe(), ": invalid activation type ", type);
        auto act = static_cast<ActivationType>(type);
        double alpha = node.attrs.getFloat("alpha", 0.0), beta = node.attrs.getFloat("beta", 0.0);
        std::string what = node.describe();
        return makeKernel([act, alpha, beta, what](LaunchContext const& ctx) -> Status {
          TensorView const& x = ctx.inputs[0];
          TensorView const& y = ctx.outputs[0];
          if (!dimsEqual(x.shape, y.shape))
            return invalidArgument(what, ": output shape ", dimsToString(y.shape), " differs from input shape ",
                                   dimsToString(x.shape));
          int64_t n = x.count();
          for (int64_t i = 0; i < n; ++i)
            storeFromDouble(y, i, applyActivation(act, loadAsDouble(x, i), alpha, beta));
          return Status::ok();
        });
      },
      [](ir::Node const&, std::vector<TensorInfo> const& in, std::vector<TensorInfo> const& out) {
        return in.size() == 1 && out.size() == 1 && isComputeFloat(in[0].dtype) && out[0].dtype == in[0].dtype;
      });
}

KILN_REGISTER_TACTIC(activationTactic);

}  // namespace
}  // namespace kiln::backends::reference
