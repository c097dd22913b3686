// Identity elimination: drops Identity and Cast nodes that do not change the type, Shuffles that do not move
// or reshape anything, Slices that read their whole input in order, and merges two consecutive Shuffles into one when their reshapes are static.
#include <numeric>
#include <optional>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

using Perm = std::vector<int64_t>;

Perm iota(int32_t rank) {
  Perm p(static_cast<size_t>(std::max(rank, 0)));
  std::iota(p.begin(), p.end(), 0);
  return p;
}

// A permutation attribute (absent or empty: identity) as a full vector of `rank` entries; nullopt if malformed.
std::optional<Perm> readPerm(ir::Node const& n, char const* attr, int32_t rank) {
  Perm p = n.attrs.getInts(attr);
  if (p.empty()) return iota(rank);
  if (static_cast<int32_t>(p.size()) != rank) return std::nullopt;
  return p;
}


// Applying p first, then q: result[i] = p[q[i]].
Perm compose(Perm const& p, Perm const& q) {
  Perm r(q.size());
  for (size_t i = 0; i < q.size(); ++i) r[i] = p[static_cast<size_t>(q[i])];
  return r;
}

// A Shuffle with static attributes in canonical form: first permutation, optional static reshape, second one.
struct ShuffleForm {
  Perm first;
  std::optional<std::vector<int64_t>> reshape;  // the reshaped dims, fully known
  Perm second;
};

// Reads a Shuffle without a dynamic reshape input; nullopt when it cannot be expressed statically.
std::optional<ShuffleForm> readShuffle(ir::Node const& n) {
  if (n.input(1) || !n.input(0)) return std::nullopt;
  int32_t inRank = n.inputs[0]->shape.nbDims;
  Dims const& y = n.outputs[0]->shape;
  ShuffleForm f;
  auto first = readPerm(n, "first_perm", inRank);
  auto second = readPerm(n, "second_perm", y.nbDims);
  if (!first || !second) return std::nullopt;
  f.first = *first;
  f.second = *second;
  if (n.attrs.has("reshape")) {
    // The reshaped dims are y before the second permutation: r[second[i]] = y[i].
    std::vector<int64_t> r(static_cast<size_t>(y.nbDims));
    for (int32_t i = 0; i < y.nbDims; ++i) r[static_cast<size_t>(f.second[i])] = y.d[i];
    if (!dimsKnown(y)) return std::nullopt;
    f.reshape = r;
  } else {
    if (inRank != y.nbDims) return std::nullopt;
    f.first = compose(f.first, f.second);  // no reshape: one permutation says it all
    f.second = iota(y.nbDims);
  }
  return f;
}

// The form of A followed by B, when one Shuffle can do both.
std::optional<ShuffleForm> merge(ShuffleForm const& a, ShuffleForm const& b) {
  ShuffleForm m;
  if (!a.reshape && !b.reshape) {
    m.first = compose(a.first, b.first);
    m.second = b.second;
  } else if (!a.reshape) {
    m.first = compose(a.first, b.first);
    m.reshape = b.reshape;
    m.second = b.second;
  } else if (!b.reshape) {
    m.first = a.first;
    m.reshape = a.reshape;
    m.second = compose(a.second, b.first);
  } else {
    if (!passutil::isIdentityPermutation(compose(a.second, b.first))) return std::nullopt;
    m.first = a.first;
    m.reshape = b.reshape;
    m.second = b.second;
  }
  return m;
}

void writeShuffle(ir::Node& n, ShuffleForm const& f) {
  n.attrs.erase("first_perm");
  n.attrs.erase("second_perm");
  n.attrs.erase("reshape");
  n.attrs.erase("zero_is_placeholder");
  if (!passutil::isIdentityPermutation(f.first)) n.attrs.setInts("first_perm", f.first);
  if (f.reshape) {
    n.attrs.setInts("reshape", *f.reshape);
    n.attrs.setInt("zero_is_placeholder", 0);  // the dims are exact; a 0 means an empty dim
  }
  if (!passutil::isIdentityPermutation(f.second)) n.attrs.setInts("second_perm", f.second);
}

class EliminateIdentity final : public Pass {
 public:
  char const* name() const override { return "eliminate_identity"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
      for (ir::Node* n : order) {
        if (isNoOp(*n)) {
          ir::Value* in = n->inputs[0];
          ir::Value* out = n->outputs[0];
          // An output that is a copy of an input (or of another output) needs its copy.
          if (out->isOutput && (in->isInput || in->isOutput)) continue;
          passutil::log(ctx, strCat(name(), ": removed ", n->describe()));
          passutil::replaceValue(g, out, in);
          g.removeNode(n);
          again = true;
          break;
        }
        if (n->op == ir::OpType::kShuffle && mergeWithProducer(g, *n)) {
          passutil::log(ctx, strCat(name(), ": merged Shuffles into ", n->describe()));
          again = true;
          break;
        }
      }
      changed |= again;
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  static bool isNoOp(ir::Node const& n) {
    if (n.outputs.size() != 1 || !n.input(0)) return false;
    ir::Value const* in = n.inputs[0];
    ir::Value const* out = n.outputs[0];
    if (in->dtype != out->dtype) return false;
    if (n.op == ir::OpType::kIdentity || n.op == ir::OpType::kCast) return n.inputs.size() == 1;
    if (n.op == ir::OpType::kSlice) return readsWholeInput(n);
    if (n.op != ir::OpType::kShuffle) return false;
    auto f = readShuffle(n);
    if (!f) return false;
    if (!f->reshape) return passutil::isIdentityPermutation(f->first);
    // A reshape to the very same static shape, with no transposition around it.
    return passutil::isIdentityPermutation(f->first) && passutil::isIdentityPermutation(f->second) && dimsKnown(in->shape) &&
           dimsEqual(in->shape, out->shape);
  }

  // A Slice whose output is its input: the same known dims, read from index 0 with unit steps (an ONNX Expand to
  // the shape the tensor already has, as exporters write the attention mask's). No sampling mode matters then.
  static bool readsWholeInput(ir::Node const& n) {
    ir::Value const* in = n.inputs[0];
    ir::Value const* out = n.outputs[0];
    if (!dimsKnown(in->shape) || !dimsEqual(in->shape, out->shape)) return false;
    auto start = passutil::constantInts(n, 1, "start");
    if (!start) return false;
    for (int64_t s : *start)
      if (s != 0) return false;
    if (n.input(3) || n.attrs.has("stride")) {
      auto stride = passutil::constantInts(n, 3, "stride");
      if (!stride) return false;
      for (int64_t s : *stride)
        if (s != 1) return false;
    }
    return true;
  }

  static bool mergeWithProducer(ir::Graph& g, ir::Node& b) {
    ir::Value* t = b.input(0);
    if (!t || !t->producer || t->producer->op != ir::OpType::kShuffle || !passutil::hasSingleUse(g, t)) return false;
    ir::Node* a = t->producer;
    auto fa = readShuffle(*a);
    auto fb = readShuffle(b);
    if (!fa || !fb) return false;
    auto m = merge(*fa, *fb);
    if (!m) return false;
    b.inputs[0] = a->inputs[0];
    writeShuffle(b, *m);
    passutil::recordFusion(b, *a);
    g.removeNode(a);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createEliminateIdentityPass() { return std::make_unique<EliminateIdentity>(); }

}  // namespace kiln::builder
