// Swish (SiLU) fusion for CPU builds: a Convolution whose output y is read only by a Sigmoid and by the product
// y * sigmoid(y) (how exporters write SiLU: EfficientNet's every block) gets the attribute cpu_swish, which the
// CPU convolution kernels (oneDNN's swish post-op; the reference) apply after the activation; the two layers go.
// GPU builds skip it (the CUDA kernels do not read the attribute).
#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

class FuseCpuSwish final : public Pass {
 public:
  char const* name() const override { return "fuse_cpu_swish"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    if (!ctx.cpuTarget) return false;
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto const& owned : g.nodes()) {
        ir::Node* conv = owned.get();
        if (conv->op != ir::OpType::kConvolution || conv->outputs.size() != 1 ||
            conv->attrs.getInt("cpu_swish", 0) != 0)
          continue;
        if (tryFuse(g, *conv, ctx)) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  bool tryFuse(ir::Graph& g, ir::Node& conv, PassContext const& ctx) {
    ir::Value* y = conv.outputs[0];
    if (y->isOutput || (y->dtype != DataType::kFLOAT && y->dtype != DataType::kHALF && y->dtype != DataType::kBF16))
      return false;
    std::vector<ir::Node*> users = g.users(y);
    if (users.size() != 2) return false;
    ir::Node* sig = nullptr;
    ir::Node* mul = nullptr;
    for (ir::Node* u : users) {
      if (u->op == ir::OpType::kActivation && u->inputs.size() == 1 && u->inputs[0] == y &&
          u->attrs.getInt("type", -1) == static_cast<int64_t>(ActivationType::kSIGMOID))
        sig = u;
      else if (u->op == ir::OpType::kElementWise && u->inputs.size() == 2 &&
               u->attrs.getInt("op", -1) == static_cast<int64_t>(ElementWiseOperation::kPROD))
        mul = u;
    }
    if (!sig || !mul || sig->outputs.size() != 1 || mul->outputs.size() != 1) return false;
    ir::Value* s = sig->outputs[0];
    if (!passutil::hasSingleUse(g, s)) return false;
    if (!((mul->inputs[0] == y && mul->inputs[1] == s) || (mul->inputs[0] == s && mul->inputs[1] == y))) return false;
    ir::Value* out = mul->outputs[0];
    if (out->dtype != y->dtype || !dimsEqual(out->shape, y->shape)) return false;
    conv.attrs.setInt("cpu_swish", 1);
    passutil::recordFusion(conv, *sig);
    passutil::recordFusion(conv, *mul);
    passutil::log(ctx, strCat(name(), ": fused ", sig->describe(), " and ", mul->describe(), " into ", conv.describe()));
    passutil::replaceValue(g, out, y);
    g.removeNode(mul);
    g.removeNode(sig);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseCpuSwishPass() { return std::make_unique<FuseCpuSwish>(); }

}  // namespace kiln::builder
