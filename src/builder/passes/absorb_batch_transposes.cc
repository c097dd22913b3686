// Removes the transposes that swap the batch and sequence axes around a chain of token-wise layers and a
// head-major Attention (torch.nn.MultiheadAttention in torchvision's ViT: [B, S, E] -> [S, B, E] -> ... ->
// [B, S, E]): the layers run on [B, S, ..] instead, and the Attention reads and writes the other layout.
#include <string>
#include <utility>
#include <vector>

#include "builder/passes/pass.h"
#include "ir/attention_layout.h"

namespace kiln::builder {
namespace {

bool isStaticDims(Dims const& d) {
  if (d.nbDims < 0) return false;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return false;
  return true;
}

// True for the permutation exchanging axes 0 and 1 of a rank-`rank` tensor and keeping the others.
bool isSwapOfFirstTwo(std::vector<int64_t> const& perm, int32_t rank) {
  if (rank < 2 || perm.size() != static_cast<size_t>(rank) || perm[0] != 1 || perm[1] != 0) return false;
  for (size_t i = 2; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Dims swapFirstTwo(Dims d) {
  std::swap(d.d[0], d.d[1]);
  return d;
}

// How a value of the chain holds its tokens. The region's leading axes are (P, Q) in the graph as exported (P, Q =
// S, B for the sequence-first ViT) and (Q, P) once rewritten; each token's row (the trailing dims) is unchanged.
// kSplit: [P, Q, row..]; kMerged: [P*Q, row..] (token p*Q + q, as the out-projection GEMM reads them); both are
// rewritten [Q, P, row..], so that the GEMM's output has the shape of the residual added to it. Row-wise layers
// compute each token's row from that row alone, so they commute with the reorder.
enum class Form { kSplit, kMerged };

struct Extents {
  int64_t p = 0, q = 0;
};

// The form of a value of shape `d` whose tokens are the region's (rank and leading dims), or false.
bool classify(Dims const& d, Extents const& x, Form& form) {
  if (d.nbDims >= 2 && d.d[0] == x.p && d.d[1] == x.q) {
    form = Form::kSplit;
    return true;
  }
  if (d.nbDims >= 1 && d.nbDims < Dims::MAX_DIMS && d.d[0] == x.p * x.q) {
    form = Form::kMerged;
    return true;
  }
  return false;
}

// Dims of the row: those after the leading one (merged) or two (split).
int32_t leadingDims(Form f) {
  switch (f) {
    case Form::kSplit:
      return 2;
    case Form::kMerged:
      return 1;
  }
  return 2;
}

// The rewritten shape of a value of shape `d` in form `f`: [Q, P, row..].
Dims rewrittenShape(Dims const& d, Form f, Extents const& x) {
  Dims r{};
  r.nbDims = 2;
  r.d[0] = x.q;
  r.d[1] = x.p;
  for (int32_t i = leadingDims(f); i < d.nbDims; ++i) r.d[r.nbDims++] = d.d[i];
  return r;
}

// A Shuffle's parts (TensorRT's: first transpose, reshape, second transpose), or false when its reshape dims come
// from a computed tensor.
struct ShuffleParts {
  std::vector<int64_t> perm1, perm2;
  bool reshape = false;
};
bool shuffleParts(ir::Node const* n, ShuffleParts& s) {
  if (n->op != ir::OpType::kShuffle || n->inputs.empty() || n->outputs.size() != 1) return false;
  if (n->input(1) && !passutil::constantData(n->input(1))) return false;
  s.perm1 = n->attrs.getInts("first_perm");
  s.perm2 = n->attrs.getInts("second_perm");
  s.reshape = n->input(1) || n->attrs.has("reshape");
  return true;
}

// Makes `n` a reshape-only Shuffle of its input 0 to the static dims `to`.
void makeReshape(ir::Node* n, Dims const& to) {
  n->attrs.erase("first_perm");
  n->attrs.erase("second_perm");
  n->attrs.setInts("reshape", std::vector<int64_t>(to.d, to.d + to.nbDims));
  n->attrs.setInt("zero_is_placeholder", 0);
  n->inputs.resize(1);
  n->outputs[0]->shape = to;
}

// Whether `other`, an operand combined with a value of shape `d` in form `f`, is the same for every token: dims
// (right-aligned) that fall on the leading axes are 1.
bool sameForEveryToken(Dims const& other, Dims const& d, Form f) {
  if (other.nbDims < 0 || other.nbDims > d.nbDims) return false;
  int32_t const rowStart = leadingDims(f);
  for (int32_t i = 0; i < other.nbDims; ++i) {
    int32_t const axis = d.nbDims - other.nbDims + i;
    if (axis < rowStart && other.d[i] != 1) return false;
  }
  return true;
}

// One rewritten layer of the chain: its new output shape and, for an Attention, its new layout.
struct Step {
  ir::Node* node = nullptr;
  Dims shape{};
  int64_t layout = 0;    // Attention only
  bool reshape = false;  // a Shuffle made reshape-only to `shape`
};

class AbsorbBatchTransposes final : public Pass {
 public:
  char const* name() const override { return "absorb_batch_transposes"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto const& owned : g.nodes()) {
        if (owned->op != ir::OpType::kShuffle) continue;
        if (tryRewrite(g, owned.get(), ctx)) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // Rewrites the region starting at `start` when every condition holds; leaves the graph unchanged otherwise.
  bool tryRewrite(ir::Graph& g, ir::Node* start, PassContext const& ctx) {
    ShuffleParts sp;
    if (!shuffleParts(start, sp) || !start->inputs[0]) return false;
    ir::Value* x = start->inputs[0];
    ir::Value* v = start->outputs[0];
    Dims const xs = x->shape;
    int32_t const r = xs.nbDims;
    if (!isStaticDims(xs) || !isStaticDims(v->shape) || r < 2) return false;
    // The start swaps axes 0 and 1 and nothing else (first transpose, then an optional reshape of the swapped
    // tokens; or the second transpose alone).
    bool const first = isSwapOfFirstTwo(sp.perm1, r) && passutil::isIdentityPermutation(sp.perm2);
    bool const second = passutil::isIdentityPermutation(sp.perm1) && !sp.reshape && isSwapOfFirstTwo(sp.perm2, r);
    if (!first && !second) return false;
    Extents const ext{xs.d[1], xs.d[0]};
    if (ext.p <= 0 || ext.q <= 0) return false;  // empty tensors: nothing to gain
    Form form{};
    if (!classify(v->shape, ext, form)) return false;
    if (!sp.reshape && form != Form::kSplit) return false;

    // Follow the single readers through row-wise layers to the inverse transpose.
    std::vector<Step> steps;
    bool hasAttention = false;
    ir::Node* end = nullptr;
    Dims endShape{};  // the end's output in the rewritten graph (its own shape)
    for (ir::Value* cur = v; steps.size() < 64;) {
      ir::Node* u = passutil::singleUser(g, cur);
      // The chain's value is input 0 (either input of an ElementWise: exporters write bias + x as often as x + bias).
      if (!u || u->inputs.empty() || u->outputs.size() != 1) return false;
      if (u->inputs[0] != cur && (u->op != ir::OpType::kElementWise || u->input(1) != cur)) return false;
      ir::Value* out = u->outputs[0];
      Dims const cs = cur->shape, os = out->shape;
      if (!isStaticDims(os)) return false;
      Step st;
      st.node = u;
      ShuffleParts up;
      if (shuffleParts(u, up)) {
        int32_t const ro = os.nbDims;
        bool const p1 = passutil::isIdentityPermutation(up.perm1), p2 = passutil::isIdentityPermutation(up.perm2);
        // The end: the tokens (reshaped to split form, or split already) with axes 0 and 1 swapped back.
        if (p1 && isSwapOfFirstTwo(up.perm2, ro)) {
          Form f{};
          Dims const reshaped = swapFirstTwo(os);
          if (!classify(reshaped, ext, f) || f != Form::kSplit) return false;
          if (!up.reshape && (form != Form::kSplit || !dimsEqual(reshaped, cs))) return false;
          end = u;
          endShape = os;
          break;
        }
        if (isSwapOfFirstTwo(up.perm1, cs.nbDims) && !up.reshape && p2 && form == Form::kSplit) {
          end = u;
          endShape = os;
          break;
        }
        // A reshape of the rows (or no change): tokens stay whole and in order.
        if (!p1 || !p2) return false;
        Form f{};
        if (!classify(os, ext, f)) return false;
        form = f;
        st.shape = rewrittenShape(os, form, ext);
        st.reshape = true;
      } else if (u->op == ir::OpType::kMatrixMultiply) {
        // x [tokens.., K] times a weight shared by every token, plus a bias shared by every token.
        HostTensor const* w = passutil::constantData(u->input(1));
        if (!w || u->inputs.size() > 3 || u->attrs.getInt("op_a", 0) != static_cast<int64_t>(MatrixOperation::kNONE) ||
            u->attrs.getInt("op_b", 0) == static_cast<int64_t>(MatrixOperation::kVECTOR))
          return false;
        Dims const ws = w->shape();
        if (ws.nbDims < 2 || ws.nbDims > cs.nbDims || cs.nbDims <= leadingDims(form)) return false;
        for (int32_t i = 0; i + 2 < ws.nbDims; ++i)
          if (ws.d[i] != 1) return false;
        ir::Value const* bias = u->input(2);
        if (bias && (bias == cur || !sameForEveryToken(bias->shape, os, form))) return false;
        if (os.nbDims != cs.nbDims) return false;
        for (int32_t i = 0; i + 1 < os.nbDims; ++i)
          if (os.d[i] != cs.d[i]) return false;
        st.shape = rewrittenShape(os, form, ext);
      } else if (u->op == ir::OpType::kElementWise) {
        if (u->inputs.size() != 2) return false;
        ir::Value const* other = u->inputs[0] == cur ? u->inputs[1] : u->inputs[0];
        if (!other || other == cur || !dimsEqual(os, cs) || !sameForEveryToken(other->shape, cs, form)) return false;
        st.shape = rewrittenShape(os, form, ext);
      } else if (u->op == ir::OpType::kActivation || u->op == ir::OpType::kUnary || u->op == ir::OpType::kCast ||
                 u->op == ir::OpType::kIdentity) {
        if (u->inputs.size() != 1 || !dimsEqual(os, cs)) return false;
        st.shape = rewrittenShape(os, form, ext);
      } else if (u->op == ir::OpType::kAttention) {
        // Packed q/k/v [P, Q, 3, H, D] in a head-major layout: the other layout reads [Q, P, 3, H, D].
        int64_t const layout = u->attrs.getInt("layout", 0);
        if (!ir::isHeadMajorAttentionLayout(layout) || u->attrs.getInt("packed_qkv", 0) != 1 ||
            u->attrs.getInt("k_transposed", 0) != 0 || form != Form::kSplit || cs.nbDims != 5 || os.nbDims != 4 ||
            os.d[0] != cs.d[0] || os.d[1] != cs.d[1])
          return false;
        for (size_t i = 1; i < u->inputs.size(); ++i)
          if (u->inputs[i] == cur || (i < 3 && u->inputs[i])) return false;
        st.layout = layout == ir::kAttentionLayoutSbhd ? ir::kAttentionLayoutBshd : ir::kAttentionLayoutSbhd;
        st.shape = swapFirstTwo(os);
        hasAttention = true;
      } else {
        return false;
      }
      steps.push_back(st);
      cur = out;
    }
    if (!end || steps.empty()) return false;

    // Rewrite. Every value of the chain becomes [Q, P, row..]; the swaps, and reshapes left without effect, go.
    // The layer recording the removed ones (fusedFrom): the Attention, else the first layer that stays.
    ir::Node* survivor = nullptr;
    for (Step const& st : steps)
      if (!st.reshape && (!survivor || st.node->op == ir::OpType::kAttention)) survivor = st.node;
    int removed = 0;
    auto const drop = [&](ir::Node* n, ir::Value* by) {
      ++removed;
      if (survivor) passutil::recordFusion(*survivor, *n);
      passutil::replaceValue(g, n->outputs[0], by);
      g.removeNode(n);
    };
    Dims const firstShape = rewrittenShape(v->shape, classifyOrSplit(v->shape, ext), ext);
    ir::Value* now = x;  // the rewritten value of the chain so far
    if (dimsEqual(firstShape, xs)) {
      drop(start, x);
    } else {
      makeReshape(start, firstShape);
      now = v;
    }
    for (Step const& st : steps) {
      ir::Node* n = st.node;
      if (st.reshape && dimsEqual(st.shape, now->shape)) {
        drop(n, now);
        continue;
      }
      if (st.reshape) {
        makeReshape(n, st.shape);
      } else {
        n->outputs[0]->shape = st.shape;
      }
      if (n->op == ir::OpType::kAttention) n->attrs.setInt("layout", st.layout);
      now = n->outputs[0];
    }
    std::string const endName = end->name;
    if (dimsEqual(now->shape, endShape)) {
      drop(end, now);
    } else {
      makeReshape(end, endShape);
    }
    passutil::log(ctx, strCat(name(), ": ", steps.size(), " layers between ", x->name, " and ", endName,
                              " run on the other order of their two leading axes",
                              hasAttention ? " (attention layout swapped)" : "", "; ", removed, " shuffles removed"));
    return true;
  }

  static Form classifyOrSplit(Dims const& d, Extents const& x) {
    Form f = Form::kSplit;
    classify(d, x, f);
    return f;
  }
};

}  // namespace

std::unique_ptr<Pass> createAbsorbBatchTransposesPass() { return std::make_unique<AbsorbBatchTransposes>(); }

}  // namespace kiln::builder
