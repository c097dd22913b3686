// Dead-layer elimination: removes every node none of whose outputs reaches a graph output.
#include <unordered_set>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

class EliminateDeadLayers final : public Pass {
 public:
  char const* name() const override { return "eliminate_dead_layers"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    std::unordered_set<ir::Node const*> live;
    std::vector<ir::Node const*> work;
    for (ir::Value const* v : g.outputs())
      if (v->producer && live.insert(v->producer).second) work.push_back(v->producer);
    // Layers without outputs exist for their effect (Assertion fails the run): they are roots too.
    for (auto const& n : g.nodes())
      if (n->outputs.empty() && live.insert(n.get()).second) work.push_back(n.get());
    while (!work.empty()) {
      ir::Node const* n = work.back();
      work.pop_back();
      for (ir::Value const* in : n->inputs)
        if (in && in->producer && live.insert(in->producer).second) work.push_back(in->producer);
    }
    std::vector<ir::Node*> dead;
    for (auto const& n : g.nodes())
      if (!live.count(n.get())) dead.push_back(n.get());
    for (ir::Node* n : dead) {
      passutil::log(ctx, strCat(name(), ": removed ", n->describe()));
      g.removeNode(n);
    }
    if (!dead.empty()) g.removeUnusedValues();
    return !dead.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> createEliminateDeadLayersPass() { return std::make_unique<EliminateDeadLayers>(); }

}  // namespace kiln::builder
