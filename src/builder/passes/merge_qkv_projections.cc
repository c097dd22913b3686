// Horizontal fusion of attention's Q, K and V projections: three MatrixMultiply nodes on one input with constant
// weights of one shape, each viewed (reshape only) as a head-major Attention's q, k or v, become one
// MatrixMultiply on the concatenated weights (and biases) whose output the Attention reads packed (packed_qkv 1).
#include <array>
#include <optional>

#include "builder/passes/pass.h"
#include "ir/attention_layout.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// `x` made by a Shuffle that only reshapes (no permutation other than the identity), read only by the attention,
// from a MatrixMultiply output read only by that Shuffle: the Shuffle; null otherwise.
ir::Node* reshapeOfProjection(ir::Graph const& g, ir::Value* x) {
  ir::Node* sh = x ? x->producer : nullptr;
  if (!sh || sh->op != ir::OpType::kShuffle || sh->outputs.size() != 1 || sh->inputs.empty() || !sh->inputs[0] ||
      sh->inputs.size() > 2 || !passutil::hasSingleUse(g, x))
    return nullptr;
  if (!passutil::isIdentityPermutation(sh->attrs.getInts("first_perm")) ||
      !passutil::isIdentityPermutation(sh->attrs.getInts("second_perm")))
    return nullptr;
  ir::Value* m = sh->inputs[0];
  ir::Node* mm = m->producer;
  if (!mm || mm->op != ir::OpType::kMatrixMultiply || mm->outputs.size() != 1 || !passutil::hasSingleUse(g, m))
    return nullptr;
  return sh;
}

// The one number of a bias that is per column of an output whose last dim is n (1 in every other dim); false
// otherwise.
bool isColumnBias(HostTensor const& b, int64_t n) {
  Dims const& s = b.shape();
  if (s.nbDims < 1 || s.d[s.nbDims - 1] != n) return false;
  for (int32_t i = 0; i + 1 < s.nbDims; ++i)
    if (s.d[i] != 1) return false;
  return true;
}

// The three tensors (one dtype and shape) joined along `axis`.
Result<HostTensor> concat3(std::array<HostTensor const*, 3> const& t, int32_t axis, char const* what,
                           MemoryBudget* budget) {
  Dims shape = t[0]->shape();
  int64_t outer = 1;
  for (int32_t i = 0; i < axis; ++i) outer *= shape.d[i];
  size_t const block = t[0]->bytes() / static_cast<size_t>(outer > 0 ? outer : 1);
  shape.d[axis] *= 3;
  KILN_ASSIGN_OR_RETURN(HostTensor r, HostTensor::allocate(t[0]->dtype(), shape, what, budget));
  auto* out = static_cast<unsigned char*>(r.mutableData());
  for (int64_t o = 0; o < outer; ++o)
    for (size_t j = 0; j < 3; ++j) {
      auto const* in = static_cast<unsigned char const*>(t[j]->data()) + static_cast<size_t>(o) * block;
      std::copy(in, in + block, out + (static_cast<size_t>(o) * 3 + j) * block);
    }
  return r;
}

// True when the reshape-only Shuffle `view` copies dims 0 and 1 of its rank-3 input (reshape attribute
// [0, 0, ..] with zero_is_placeholder): its output's leading dims are its input's, known or not.
bool copiesLeadingDims(ir::Node const* view) {
  if (view->input(1) || view->inputs[0]->shape.nbDims != 3 || view->attrs.getInt("zero_is_placeholder", 1) == 0)
    return false;
  std::vector<int64_t> const r = view->attrs.getInts("reshape");
  return r.size() == 4 && r[0] == 0 && r[1] == 0;
}

class MergeQkvProjections final : public Pass {
 public:
  char const* name() const override { return "merge_qkv_projections"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto const& owned : g.nodes()) {
        if (owned->op != ir::OpType::kAttention) continue;
        KILN_ASSIGN_OR_RETURN(bool merged, tryMerge(g, owned.get(), ctx));
        if (merged) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  Result<bool> tryMerge(ir::Graph& g, ir::Node* att, PassContext const& ctx) {
    int64_t const layout = att->attrs.getInt("layout", 0);
    if (!ir::isHeadMajorAttentionLayout(layout) || att->attrs.getInt("packed_qkv", 0) != 0 ||
        att->attrs.getInt("k_transposed", 0) != 0 || att->inputs.size() < 3)
      return false;
    std::array<ir::Node*, 3> views{}, mms{};
    for (size_t i = 0; i < 3; ++i) {
      views[i] = reshapeOfProjection(g, att->inputs[i]);
      if (!views[i]) return false;
      mms[i] = views[i]->inputs[0]->producer;
    }
    if (mms[0] == mms[1] || mms[0] == mms[2] || mms[1] == mms[2]) return false;
    // One input, constant weights of one type and shape, one transposition, the same epilogue (the attributes
    // hold op_a, op_b and the activation), biases per column or none, no residual.
    ir::Node* const mq = mms[0];
    if (mq->inputs.size() < 2 || !mq->inputs[0] || mq->input(3)) return false;
    std::array<HostTensor const*, 3> w{}, b{};
    for (size_t i = 0; i < 3; ++i) {
      ir::Node const* m = mms[i];
      if (m->inputs.size() < 2 || m->inputs[0] != mq->inputs[0] || m->input(3) || !(m->attrs == mq->attrs) ||
          (m->input(2) == nullptr) != (mq->input(2) == nullptr))
        return false;
      w[i] = passutil::constantData(m->inputs[1]);
      if (!w[i] || w[i]->dtype() != m->outputs[0]->dtype ||
          (i > 0 && (w[i]->dtype() != w[0]->dtype() || !dimsEqual(w[i]->shape(), w[0]->shape()))))
        return false;
      if (m->input(2)) {
        b[i] = passutil::constantData(m->inputs[2]);
        if (!b[i] || (i > 0 && (b[i]->dtype() != b[0]->dtype() || !dimsEqual(b[i]->shape(), b[0]->shape()))))
          return false;
      }
    }
    bool const bTransposed = mq->attrs.getInt("op_b", 0) == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
    if (!bTransposed && mq->attrs.getInt("op_b", 0) != static_cast<int64_t>(MatrixOperation::kNONE)) return false;
    Dims const& ws = w[0]->shape();
    Dims const& ms = mq->outputs[0]->shape;
    if (ws.nbDims < 2 || ms.nbDims < 2) return false;
    // Only a weight shared by the whole batch: a weight with batch dims would be concatenated per batch entry.
    for (int32_t i = 0; i + 2 < ws.nbDims; ++i)
      if (ws.d[i] != 1) return false;
    int64_t const n = bTransposed ? ws.d[ws.nbDims - 2] : ws.d[ws.nbDims - 1];
    if (n <= 0 || ms.d[ms.nbDims - 1] != n) return false;
    if (b[0] && !isColumnBias(*b[0], n)) return false;

    // The views: one shape [d0, d1, H, D] (B and S in the layout's order) with H * D = n, so that the merged
    // output [.., 3n] views as [d0, d1, 3, H, D] and each projection is one slot of its "3" dim. d0 and d1 are
    // known, or one is unknown (the packed view's -1), or both are copied from the projections' rank-3 outputs
    // (which share their leading dims: one input, weights without batch dims), as the packed view then copies them.
    Dims const x = att->inputs[0]->shape;
    for (size_t i = 0; i < 3; ++i)
      if (att->inputs[i]->dtype != att->inputs[0]->dtype || !dimsEqual(att->inputs[i]->shape, x)) return false;
    if (x.nbDims != 4 || x.d[2] <= 0 || x.d[3] <= 0 || x.d[2] * x.d[3] != n) return false;
    bool const copyLeading = x.d[0] < 0 && x.d[1] < 0;
    if (copyLeading)
      for (ir::Node const* v : views)
        if (!copiesLeadingDims(v)) return false;
    for (size_t i = 0; i < 3; ++i)
      if (mms[i]->outputs[0]->dtype != mq->outputs[0]->dtype || !dimsEqual(mms[i]->outputs[0]->shape, ms)) return false;

    // Merged weights along N (the last axis of B, or the second-to-last when B is transposed) and biases.
    KILN_ASSIGN_OR_RETURN(HostTensor wAll,
                          concat3(w, bTransposed ? ws.nbDims - 2 : ws.nbDims - 1, "merged Q/K/V weights", ctx.budget));
    std::optional<HostTensor> bAll;
    if (b[0]) {
      KILN_ASSIGN_OR_RETURN(HostTensor t, concat3(b, b[0]->shape().nbDims - 1, "merged Q/K/V bias", ctx.budget));
      bAll = std::move(t);
    }
    std::string const base = mq->name + "_qkv";
    std::vector<ir::Value*> mmInputs{mq->inputs[0],
                                     g.addConstant(g.uniqueNodeName(base + "_weights"), std::move(wAll))->output(0)};
    if (bAll) mmInputs.push_back(g.addConstant(g.uniqueNodeName(base + "_bias"), std::move(*bAll))->output(0));
    ir::Node* merged = g.addNode(ir::OpType::kMatrixMultiply, g.uniqueNodeName(base), mmInputs);
    merged->attrs = mq->attrs;
    Dims mergedShape = ms;
    mergedShape.d[ms.nbDims - 1] = 3 * n;
    merged->outputs[0]->dtype = mq->outputs[0]->dtype;
    merged->outputs[0]->shape = mergedShape;
    for (ir::Node const* m : mms) passutil::recordFusion(*merged, *m);

    ir::Node* view = g.addNode(ir::OpType::kShuffle, g.uniqueNodeName(base + "_view"), {merged->outputs[0]});
    if (copyLeading) {
      view->attrs.setInts("reshape", {0, 0, 3, x.d[2], x.d[3]});
      view->attrs.setInt("zero_is_placeholder", 1);
    } else {
      view->attrs.setInts("reshape", {x.d[0] < 0 ? -1 : x.d[0], x.d[1] < 0 ? -1 : x.d[1], 3, x.d[2], x.d[3]});
      view->attrs.setInt("zero_is_placeholder", 0);
    }
    view->outputs[0]->dtype = att->inputs[0]->dtype;
    view->outputs[0]->shape = makeDims({x.d[0], x.d[1], 3, x.d[2], x.d[3]});
    for (ir::Node const* v : views) passutil::recordFusion(*view, *v);

    att->inputs[0] = view->outputs[0];
    att->inputs[1] = nullptr;
    att->inputs[2] = nullptr;
    att->attrs.setInt("packed_qkv", 1);
    passutil::log(ctx, strCat(name(), ": ", mms[0]->describe(), ", ", mms[1]->describe(), " and ", mms[2]->describe(),
                              " into ", merged->describe(), ", read packed by ", att->describe()));
    for (size_t i = 0; i < 3; ++i) {
      g.removeNode(views[i]);
      g.removeNode(mms[i]);
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createMergeQkvProjectionsPass() { return std::make_unique<MergeQkvProjections>(); }

}  // namespace kiln::builder
