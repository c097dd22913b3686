// GELU fusion: the exporters' erf form of GELU, x * 0.5 * (1 + erf(x / sqrt(2))) as five element-wise layers (in
// either order of the two products, with the division written as a product by 1/sqrt(2)), becomes one
// Activation kGELU_ERF, which bias/activation fusion can then merge into the matrix multiply before it.
#include <cmath>
#include <vector>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

using ir::Node;
using ir::OpType;
using ir::Value;

constexpr double kTolerance = 1e-4;  // the constants as float32 exporters write them

// The single element of a one-element float constant, if `v` is one.
bool scalarConstant(Value const* v, double* out) {
  HostTensor const* c = passutil::constantData(v);
  if (!c || c->count() != 1 || !isFloatType(c->dtype())) return false;
  *out = c->doubleAt(0);
  return true;
}

bool near(double a, double b) { return std::fabs(a - b) <= kTolerance * std::fabs(b); }

int64_t elementWiseOp(Node const* n) { return n ? n->attrs.getInt("op", -1) : -1; }

class FuseGelu final : public Pass {
 public:
  char const* name() const override { return "fuse_gelu"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topoOrder());
    for (Node* n : order) {
      if (n->op != OpType::kElementWise || elementWiseOp(n) != static_cast<int64_t>(ElementWiseOperation::kPROD))
        continue;
      std::vector<Node*> merged;
      Value* x = match(g, *n, merged);
      if (!x || !dimsEqual(x->shape, n->outputs[0]->shape) || x->dtype != n->outputs[0]->dtype) continue;
      for (Node* m : merged) passutil::recordFusion(*n, *m);
      // The merged layers were read by this chain only; their constants go with them when nothing else reads them.
      std::vector<Value*> constants;
      for (Node* m : merged) {
        for (Value* in : m->inputs)
          if (in && in->producer && in->producer->op == OpType::kConstant) constants.push_back(in);
        g.removeNode(m);
      }
      for (Value* in : n->inputs)
        if (in && in->producer && in->producer->op == OpType::kConstant) constants.push_back(in);
      n->op = OpType::kActivation;
      n->inputs = {x};
      n->attrs = ir::Attributes();
      n->attrs.setInt("type", static_cast<int64_t>(ActivationType::kGELU_ERF));
      for (Value* c : constants)
        if (c->producer && !c->isOutput && g.users(c).empty()) g.removeNode(c->producer);
      passutil::log(ctx, strCat(name(), ": ", n->describe(), " is GELU (erf)"));
      changed = true;
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // x when the product `top` computes GELU(x); `merged` gets the layers folded in.
  static Value* match(ir::Graph const& g, Node const& top, std::vector<Node*>& merged) {
    // The three factors x, 0.5 and (1 + erf(x / sqrt 2)), over two products.
    std::vector<Value*> factors;
    for (Value* in : top.inputs) {
      Node* p = in ? in->producer : nullptr;
      if (p && p->op == OpType::kElementWise && elementWiseOp(p) == static_cast<int64_t>(ElementWiseOperation::kPROD) &&
          passutil::hasSingleUse(g, in) && factors.size() < 3) {
        factors.insert(factors.end(), p->inputs.begin(), p->inputs.end());
        merged.push_back(p);
      } else {
        factors.push_back(in);
      }
    }
    if (factors.size() != 3 || merged.size() != 1) return nullptr;
    double half = 0;
    std::vector<Value*> rest;
    for (Value* f : factors) {
      double c;
      if (!half && scalarConstant(f, &c) && near(c, 0.5)) half = c;
      else rest.push_back(f);
    }
    if (!half || rest.size() != 2) return nullptr;
    for (int pick = 0; pick < 2; ++pick) {
      Value* candidate = rest[pick];
      Value* x = rest[1 - pick];
      Node* add = candidate->producer;
      if (!add || add->op != OpType::kElementWise || elementWiseOp(add) != static_cast<int64_t>(ElementWiseOperation::kSUM) ||
          !passutil::hasSingleUse(g, candidate))
        continue;
      for (int side = 0; side < 2; ++side) {
        double one;
        Value* e = add->inputs[side];
        if (!scalarConstant(add->inputs[1 - side], &one) || !near(one, 1.0)) continue;
        Node* erf = e ? e->producer : nullptr;
        if (!erf || erf->op != OpType::kUnary || erf->attrs.getInt("op", -1) != static_cast<int64_t>(UnaryOperation::kERF) ||
            !passutil::hasSingleUse(g, e))
          continue;
        Value* d = erf->inputs[0];
        Node* scale = d ? d->producer : nullptr;
        if (!scale || scale->op != OpType::kElementWise || !passutil::hasSingleUse(g, d) || scale->inputs[0] != x) continue;
        double c;
        if (!scalarConstant(scale->inputs[1], &c)) continue;
        bool ok = (elementWiseOp(scale) == static_cast<int64_t>(ElementWiseOperation::kDIV) && near(c, std::sqrt(2.0))) ||
                  (elementWiseOp(scale) == static_cast<int64_t>(ElementWiseOperation::kPROD) && near(c, std::sqrt(0.5)));
        if (!ok) continue;
        merged.push_back(add);
        merged.push_back(erf);
        merged.push_back(scale);
        return x;
      }
    }
    return nullptr;
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseGeluPass() { return std::make_unique<FuseGelu>(); }

}  // namespace kiln::builder
