// Common-subexpression elimination: two nodes of one op with the same attributes, precision and inputs compute
// the same values, so the later one's users read the earlier one's outputs (exporters repeat the attention-mask
// arithmetic in every transformer layer, each time on constants of its own, which merge first).
#include <cstring>
#include <map>
#include <utility>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// Small constants merge when their type, shape and bytes are equal: PyTorch's exporter writes the zero and -inf
// of a boolean attention mask's Where, and shape vectors, anew in every layer, so the layers after them could
// never merge. Large ones (weights) stay apart: equal weights are rare and comparing them every round is not free.
constexpr int64_t kMaxMergedConstantBytes = 1024;

bool mergeableConstant(ir::Node const& n) {
  return n.op == ir::OpType::kConstant && n.constant && n.outputs.size() == 1 &&
         n.constant->bytes() <= static_cast<size_t>(kMaxMergedConstantBytes) && !n.outputs[0]->isOutput &&
         !n.outputs[0]->requestedType;
}

bool sameConstant(ir::Node const& a, ir::Node const& b) {
  HostTensor const& x = *a.constant;
  HostTensor const& y = *b.constant;
  return x.dtype() == y.dtype() && dimsEqual(x.shape(), y.shape()) && x.bytes() == y.bytes() &&
         a.outputs[0]->dtype == b.outputs[0]->dtype && dimsEqual(a.outputs[0]->shape, b.outputs[0]->shape) &&
         (x.bytes() == 0 || std::memcmp(x.data(), y.data(), x.bytes()) == 0);
}

// Nodes whose outputs are not a function of their inputs and attributes alone, or that act for their effect.
bool mergeable(ir::Node const& n) {
  // Constants go through mergeableConstant (their data is no attribute).
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
    std::vector<ir::Node*> constants;
    std::vector<ir::Node*> removed;
    for (ir::Node* n : order) {
      if (!mergeableConstant(*n)) continue;
      ir::Node* twin = nullptr;
      for (ir::Node* m : constants)
        if (sameConstant(*m, *n)) {
          twin = m;
          break;
        }
      if (!twin) {
        constants.push_back(n);
        continue;
      }
      g.replaceAllUses(n->outputs[0], twin->outputs[0]);
      passutil::log(ctx, strCat(name(), ": ", n->describe(), " holds what ", twin->describe(), " does"));
      removed.push_back(n);
      changed = true;
    }
    for (ir::Node* n : removed) g.removeNode(n);
    // `order` still names the removed constants: sort again.
    if (!removed.empty()) {
      KILN_ASSIGN_OR_RETURN(order, g.topoOrder());
    }
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
