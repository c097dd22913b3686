// Broadcast elimination: a logical And with a constant that is true everywhere (Or: false everywhere) passes its
// other operand through, only broadcast to the shape of the constant, and an Expand (imported as a wrapping
// Slice) broadcasts its input. The operand takes the result's place when
// every layer that would see a smaller tensor is pointwise (ElementWise, Select, Unary, Activation, Cast) and the
// broadcast comes back where it is consumed: each value whose shape changes is read only by such layers, and none
// is a graph output. Transformers' padding mask (HuggingFace BERT exported through PyTorch 2.x):
// And(q >= 0 over [1, 1, S, 1], mask [B, 1, 1, S]) -> Where(., 0, -inf) -> Add to every layer's scores; without the
// And the mask stays [B, 1, 1, S] (the attention kernel reads a key-padding row, not an [S, S] tile per batch
// entry) and no [B, 1, S, S] tensor is built.
#include <map>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

using ir::Node;
using ir::OpType;
using ir::Value;

// True when `n`'s output shape is the numpy broadcast of its inputs' shapes and nothing else about it depends on
// them (the layers fuse_pointwise takes).
bool isPointwise(Node const& n) {
  if (n.outputs.size() != 1) return false;
  switch (n.op) {
    case OpType::kElementWise:
    case OpType::kSelect:
    case OpType::kUnary:
    case OpType::kActivation:
    case OpType::kCast:
      return true;
    default:
      return false;
  }
}

// True when every element of the bool constant `c` is `value`.
bool allEqual(HostTensor const& c, bool value) {
  if (c.dtype() != DataType::kBOOL) return false;
  auto const* p = static_cast<uint8_t const*>(c.data());
  for (int64_t i = 0; i < c.count(); ++i)
    if ((p[i] != 0) != value) return false;
  return true;
}

// The input whose value `n`'s output is, only broadcast to a larger shape, or -1: the operand of an And/Or that is
// not the identity constant, or the input of an Expand (a wrapping Slice from index 0 with unit steps whose every
// output extent, all known, is the input's or repeats an input extent of 1).
int broadcastSource(Node const& n) {
  if (n.op == OpType::kSlice) {
    Value const* x = n.input(0);
    Value const* y = n.outputs.size() == 1 ? n.outputs[0] : nullptr;
    if (!x || !y || n.attrs.getInt("mode", 0) != static_cast<int64_t>(SampleMode::kWRAP) || n.input(5) ||
        n.attrs.has("axes") || !dimsKnown(x->shape) || !dimsKnown(y->shape) || x->shape.nbDims != y->shape.nbDims)
      return -1;
    auto start = passutil::constantInts(n, 1, "start");
    if (!start || static_cast<int32_t>(start->size()) != x->shape.nbDims) return -1;
    for (int64_t v : *start)
      if (v != 0) return -1;
    if (n.input(3) || n.attrs.has("stride")) {
      auto stride = passutil::constantInts(n, 3, "stride");
      if (!stride) return -1;
      for (int64_t v : *stride)
        if (v != 1) return -1;
    }
    for (int32_t d = 0; d < x->shape.nbDims; ++d)
      if (x->shape.d[d] != y->shape.d[d] && x->shape.d[d] != 1) return -1;
    return 0;
  }
  if (n.op != OpType::kElementWise || n.inputs.size() != 2 || !n.inputs[0] || !n.inputs[1]) return -1;
  auto op = static_cast<ElementWiseOperation>(n.attrs.getInt("op", -1));
  if (op != ElementWiseOperation::kAND && op != ElementWiseOperation::kOR) return -1;
  bool const identity = op == ElementWiseOperation::kAND;  // x and true = x, x or false = x
  for (int side = 0; side < 2; ++side) {
    HostTensor const* c = passutil::constantData(n.inputs[static_cast<size_t>(side)]);
    Value const* other = n.inputs[static_cast<size_t>(1 - side)];
    if (c && other->dtype == DataType::kBOOL && allEqual(*c, identity)) return 1 - side;
  }
  return -1;
}

class EliminateBroadcasts final : public Pass {
 public:
  char const* name() const override { return "eliminate_broadcasts"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {  // one rewrite at a time: the order is taken again after each
      again = false;
      KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, g.topoOrder());
      for (Node* n : order) {
        int const keep = broadcastSource(*n);
        if (keep < 0) continue;
        Value* from = n->outputs[0];
        Value* to = n->inputs[static_cast<size_t>(keep)];
        if (from->isOutput || from->shape.nbDims < 0 || from->shape.nbDims != to->shape.nbDims) continue;
        std::map<Value*, Dims> shapes{{from, to->shape}};
        if (!dimsEqual(from->shape, to->shape) && !shrinks(order, shapes)) continue;
        passutil::log(ctx, strCat(name(), ": removed ", n->describe(), " (passes ", to->name, " through)"));
        for (auto const& [v, shape] : shapes) v->shape = shape;  // the layers after it, as inference will see them
        passutil::replaceValue(g, from, to);
        g.removeNode(n);
        changed = again = true;
        break;
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // Whether the one value in `changedShape` may take the shape it maps to there (a shape it broadcasts from):
  // walking the layers after it in topological order with the shapes they would get, every value whose shape
  // changes (added to `changedShape`) is read only by pointwise layers and is no graph output. Unknown extents
  // (-1) are fine: the constant's extents are known, so an axis it broadcast is known in `from`, and the
  // broadcast counts as restored only where another operand gives that axis the same known extent (a -1 there
  // could be 1 at run time).
  static bool shrinks(std::vector<Node*> const& order, std::map<Value*, Dims>& changedShape) {
    for (Node* n : order) {
      bool reads = false;
      for (Value* v : n->inputs) reads = reads || (v && changedShape.count(v));
      if (!reads) continue;
      if (!isPointwise(*n)) return false;
      Value* y = n->outputs[0];
      Dims s{};
      bool first = true;
      for (Value* v : n->inputs) {
        if (!v) return false;
        auto it = changedShape.find(v);
        Dims const& vs = it != changedShape.end() ? it->second : v->shape;
        if (vs.nbDims < 0) return false;
        if (first) {
          s = vs;
          first = false;
          continue;
        }
        Result<Dims> b = broadcastShapes(s, vs);
        if (!b.isOk()) return false;
        s = *b;
      }
      if (first || y->shape.nbDims < 0) return false;
      if (dimsEqual(s, y->shape)) continue;  // the broadcast is back: nothing after this layer changes
      if (y->isOutput || s.nbDims != y->shape.nbDims) return false;
      changedShape[y] = s;
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createEliminateBroadcastsPass() { return std::make_unique<EliminateBroadcasts>(); }

}  // namespace kiln::builder
