// Common-subexpression elimination: two nodes of one op with the same attributes, precision and inputs compute
// the same values, so the later one's users read the earlier one's outputs (exporters repeat the attention-mask
// arithmetic in every transformer layer).
#include <map>
#include <utility>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// Nodes whose outputs are not a function of their inputs and attributes alone, or that act for their effect.
bool mergeable(ir::Node const& n) {
  // Constants stay apart: passes rewrite a layer's weights in place (folding a scale into a convolution).
  if (n.op == ir::OpType::kConstant || !n.subgraphs.empty() || n.outputs.empty()) return false;
  if (!passutil::outputsFollowFromInputs(n)) return false;
  for (ir::Value const* v : n.outputs)
    if (v->requestedType) return false;  // keeps the user's per-layer output type requests apart
  return true;
}

class EliminateCommonSubexpressions final : public Pass {
 public:
  char const* name() const override { return "eliminate_common_subexpressions"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
    // Candidates by (op, inputs); attributes and the rest are compared within a bucket.
    std::map<std::pair<int, std::vector<ir::Value*>>, std::vector<ir::Node*>> seen;
    bool changed = false;
    for (ir::Node* n : order) {
      if (!mergeable(*n)) continue;
      auto& bucket = seen[{static_cast<int>(n->op), n->inputs}];
      ir::Node* twin = nullptr;
      for (ir::Node* m : bucket)
        if (equivalent(*m, *n)) {
          twin = m;
          break;
        }
      if (!twin) {
        bucket.push_back(n);
        continue;
      }
      // A graph output keeps its own producer (its name and buffer are the user's).
      bool outputs = false;
      for (ir::Value* v : n->outputs) outputs = outputs || v->isOutput;
      if (outputs) continue;
      for (size_t i = 0; i < n->outputs.size(); ++i) g.replaceAllUses(n->outputs[i], twin->outputs[i]);
      passutil::recordFusion(*twin, *n);
      passutil::log(ctx, strCat(name(), ": ", n->describe(), " computes what ", twin->describe(), " does"));
      g.removeNode(n);
      changed = true;
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  static bool equivalent(ir::Node const& a, ir::Node const& b) {
    if (a.op != b.op || a.inputs != b.inputs || a.outputs.size() != b.outputs.size() || !(a.attrs == b.attrs) ||
        a.precision != b.precision)
      return false;
    for (size_t i = 0; i < a.outputs.size(); ++i)
      if (a.outputs[i]->dtype != b.outputs[i]->dtype) return false;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createEliminateCommonSubexpressionsPass() {
  return std::make_unique<EliminateCommonSubexpressions>();
}

}  // namespace kiln::builder
