// GELU recognition: the erf form exporters write for GELU (torch: Div(x, sqrt 2) -> Erf -> Add 1 -> Mul x -> Mul 0.5,
// the halving placed on either side) becomes one Activation kGELU_ERF, which the bias/activation fusion can then
// put into the MatrixMultiply or Convolution before it.
#include <cmath>
#include <optional>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

using Op = ElementWiseOperation;

bool isElementWise(ir::Node const* n, Op op) {
  return n && n->op == ir::OpType::kElementWise && n->inputs.size() == 2 && n->inputs[0] && n->inputs[1] &&
         n->outputs.size() == 1 && n->attrs.getInt("op", -1) == static_cast<int64_t>(op);
}

// The one value of a constant that holds a single element (any rank), or nullopt.
std::optional<double> scalarConstant(ir::Value const* v) {
  HostTensor const* c = passutil::constantData(v);
  if (!c || !isFloatType(c->dtype()) || c->count() != 1) return std::nullopt;
  return c->doubleAt(0);
}

bool near(std::optional<double> v, double want) { return v && std::fabs(*v - want) <= 1e-6 * std::fabs(want); }

// The other input of a two-input node `n` whose input `known` is one of them; null if `known` is not an input.
ir::Value* otherInput(ir::Node const* n, ir::Value const* known) {
  if (n->inputs[0] == known) return n->inputs[1];
  if (n->inputs[1] == known) return n->inputs[0];
  return nullptr;
}

// The input of `n` (a two-input ElementWise) other than a scalar constant equal to `c`, or null.
ir::Value* inputBesideConstant(ir::Node const* n, double c) {
  if (near(scalarConstant(n->inputs[1]), c)) return n->inputs[0];
  if (near(scalarConstant(n->inputs[0]), c)) return n->inputs[1];
  return nullptr;
}

class FuseGelu final : public Pass {
 public:
  char const* name() const override { return "fuse_gelu"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto const& owned : g.nodes()) {
        ir::Node* erf = owned.get();
        if (erf->op != ir::OpType::kUnary || erf->attrs.getInt("op", -1) != static_cast<int64_t>(UnaryOperation::kERF))
          continue;
        if (tryFuse(g, erf, ctx)) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // Matches the pattern around `erf`; on a match replaces its last node's output by a new Activation of x.
  bool tryFuse(ir::Graph& g, ir::Node* erf, PassContext const& ctx) {
    if (erf->inputs.size() != 1 || !erf->inputs[0] || erf->outputs.size() != 1) return false;
    ir::Node* scaleIn = erf->inputs[0]->producer;
    if (!scaleIn || !passutil::hasSingleUse(g, erf->inputs[0])) return false;
    // x / sqrt(2) or x * (1 / sqrt(2)).
    ir::Value* x = nullptr;
    if (isElementWise(scaleIn, Op::kDIV) && near(scalarConstant(scaleIn->inputs[1]), std::sqrt(2.0)))
      x = scaleIn->inputs[0];
    else if (isElementWise(scaleIn, Op::kPROD))
      x = inputBesideConstant(scaleIn, 1.0 / std::sqrt(2.0));
    if (!x || !(x->dtype == DataType::kFLOAT || x->dtype == DataType::kHALF || x->dtype == DataType::kBF16)) return false;
    // 1 + erf(..)
    ir::Node* plus = passutil::singleUser(g, erf->outputs[0]);
    if (!isElementWise(plus, Op::kSUM) || inputBesideConstant(plus, 1.0) != erf->outputs[0]) return false;
    // The product with x and with 0.5, in one of three orders.
    ir::Node* p1 = passutil::singleUser(g, plus->outputs[0]);
    if (!isElementWise(p1, Op::kPROD)) return false;
    ir::Value* other = otherInput(p1, plus->outputs[0]);
    std::vector<ir::Node*> chain{scaleIn, erf, plus, p1};
    ir::Node* last = nullptr;
    if (other == x) {
      // ((1 + erf) * x) * 0.5
      ir::Node* p2 = passutil::singleUser(g, p1->outputs[0]);
      if (!isElementWise(p2, Op::kPROD) || inputBesideConstant(p2, 0.5) != p1->outputs[0]) return false;
      chain.push_back(p2);
      last = p2;
    } else if (near(scalarConstant(other), 0.5)) {
      // ((1 + erf) * 0.5) * x
      ir::Node* p2 = passutil::singleUser(g, p1->outputs[0]);
      if (!isElementWise(p2, Op::kPROD) || otherInput(p2, p1->outputs[0]) != x) return false;
      chain.push_back(p2);
      last = p2;
    } else if (other && other->producer && isElementWise(other->producer, Op::kPROD) &&
               passutil::hasSingleUse(g, other) && inputBesideConstant(other->producer, 0.5) == x) {
      // (x * 0.5) * (1 + erf)
      chain.push_back(other->producer);
      last = p1;
    } else {
      return false;
    }
    ir::Value* y = last->outputs[0];
    if (y->dtype != x->dtype || !dimsEqual(y->shape, x->shape)) return false;
    ir::Node* act = g.addNode(ir::OpType::kActivation, g.uniqueNodeName(erf->name + "_gelu"), {x});
    act->attrs.setInt("type", static_cast<int64_t>(ActivationType::kGELU_ERF));
    act->attrs.setFloat("alpha", 0.0);
    act->attrs.setFloat("beta", 0.0);
    act->outputs[0]->dtype = y->dtype;
    act->outputs[0]->shape = y->shape;
    for (ir::Node const* n : chain) {
      if (n->fusedFrom.empty()) act->fusedFrom.push_back(n->name);
      for (auto const& f : n->fusedFrom) act->fusedFrom.push_back(f);
    }
    passutil::log(ctx, strCat(name(), ": ", chain.size(), " layers from ", scaleIn->describe(), " into ",
                              act->describe()));
    passutil::replaceValue(g, y, act->outputs[0]);
    for (ir::Node* n : chain) g.removeNode(n);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseGeluPass() { return std::make_unique<FuseGelu>(); }

}  // namespace kiln::builder
