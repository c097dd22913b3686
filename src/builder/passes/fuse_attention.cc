// Attention fusion (GPU builds; fp32 CPU builds where the CPU's fused loop is fast): MatMul(q, k) -> [scale] ->
// [+ mask] -> SoftMax(last axis) -> [NaN -> 0] -> MatMul(p, v), as the exporters decompose
// scaled_dot_product_attention (PyTorch's SDPA for BERT and ViT, and the plain Div/Mul forms), becomes one Attention
// node that the CUDA backend runs as one flash-attention kernel (the CPU backend as attention_cpu_tiled); the
// head-splitting Transposes around it (q, k, v [B, S, H, D] -> [B, H, S, D], y back) fold into its layout 1.
#include <algorithm>
#include <cmath>
#include <optional>

#include "builder/passes/dim_origin.h"
#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

using Op = ElementWiseOperation;

// Largest head dim the CUDA kernels take (and a multiple of 8): larger ones would run on the host.
constexpr int64_t kMaxHeadDim = 128;

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

bool isKernelType(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; }

bool headDimOk(int64_t d) { return d > 0 && d % 8 == 0 && d <= kMaxHeadDim; }

// A MatrixMultiply without bias, residual or activation whose first operand is not transposed.
bool isPlainMatmul(ir::Node const* n) {
  return n && n->op == ir::OpType::kMatrixMultiply && n->inputs.size() >= 2 && n->inputs[0] && n->inputs[1] &&
         !n->input(2) && !n->input(3) && n->outputs.size() == 1 && n->attrs.getInt("activation", -1) == -1 &&
         n->attrs.getInt("op_a", 0) == static_cast<int64_t>(MatrixOperation::kNONE);
}

// `v` = x * c (or x / c) with c a one-element constant, x of v's shape, v read once: x and the factor; else v, 1.
std::pair<ir::Value*, double> stripScale(ir::Graph const& g, ir::Value* v, std::vector<ir::Node*>& chain) {
  ir::Node* n = v->producer;
  if (!passutil::hasSingleUse(g, v)) return {v, 1.0};
  for (int side = 0; side < 2; ++side) {
    ir::Value* x = nullptr;
    double f = 1.0;
    if (isElementWise(n, Op::kPROD)) {
      auto c = scalarConstant(n->inputs[1 - side]);
      if (!c) continue;
      x = n->inputs[side];
      f = *c;
    } else if (isElementWise(n, Op::kDIV) && side == 0) {
      auto c = scalarConstant(n->inputs[1]);
      if (!c || *c == 0.0) continue;
      x = n->inputs[0];
      f = 1.0 / *c;
    } else {
      continue;
    }
    if (x->dtype != v->dtype || !dimsEqual(x->shape, v->shape)) continue;
    chain.push_back(n);
    return {x, f};
  }
  return {v, 1.0};
}

using Perm = std::vector<int64_t>;
using passutil::readShuffle;

// The swap of axes 1 and 2: [B, H, S, D] <-> [B, S, H, D].
Perm const kSwapHeads{0, 2, 1, 3};
// k^T [B, H, D, S] viewed as [B, S, H, D].
Perm const kHeadsFromKT{0, 3, 1, 2};

// A rewrite of a Shuffle next to the attention: it goes (its input takes the place of its output), or it keeps
// its reshape and loses its permutations.
struct ShuffleEdit {
  ir::Node* sh = nullptr;
  bool remove = false;
  Dims shape{};  // the output's new shape when kept
};

// `x` (rank 4) made by a Shuffle that only the attention reads: the edit after which the Shuffle gives x viewed
// through `e` (z[i] = x[e[i]]) with no transposition left; nullopt when a transposition would stay.
std::optional<ShuffleEdit> absorbProducer(ir::Graph const& g, ir::Value* x, Perm const& e) {
  ir::Node* sh = x->producer;
  auto v = readShuffle(sh);
  if (!v || x->shape.nbDims != 4 || !passutil::hasSingleUse(g, x)) return std::nullopt;
  ShuffleEdit edit;
  edit.sh = sh;
  Perm after(4);
  for (size_t i = 0; i < 4; ++i) after[i] = v->second[static_cast<size_t>(e[i])];
  if (v->reshape) {
    // out = second(reshape(first(in))): the reshape stays, so neither permutation may.
    if (!passutil::isIdentityPermutation(v->first) || !passutil::isIdentityPermutation(after)) return std::nullopt;
  } else {
    // out[i] = in[first[second[i]]]; viewed through e: in[first[second[e[i]]]].
    if (v->first.size() != 4) return std::nullopt;
    Perm all(4);
    for (size_t i = 0; i < 4; ++i) all[i] = v->first[static_cast<size_t>(after[i])];
    if (!passutil::isIdentityPermutation(all)) return std::nullopt;
    edit.remove = true;
  }
  edit.shape = x->shape;
  for (int32_t i = 0; i < 4; ++i) edit.shape.d[i] = x->shape.d[e[static_cast<size_t>(i)]];
  return edit;
}

// The only reader of `y` (rank 4), a Shuffle: the edit after which it reads y viewed through the involution `e`
// (y[j] = ynew[e[j]]) and gives the same output with no transposition left; nullopt otherwise.
std::optional<ShuffleEdit> absorbConsumer(ir::Graph const& g, ir::Value* y, Perm const& e) {
  ir::Node* sh = passutil::singleUser(g, y);
  auto v = readShuffle(sh);
  if (!v || sh->inputs[0] != y || y->shape.nbDims != 4) return std::nullopt;
  ShuffleEdit edit;
  edit.sh = sh;
  Perm before(4);
  for (size_t i = 0; i < 4; ++i) before[i] = e[static_cast<size_t>(v->first[i])];
  if (v->reshape) {
    if (!passutil::isIdentityPermutation(before) || !passutil::isIdentityPermutation(v->second)) return std::nullopt;
  } else {
    // out[i] = y[first[second[i]]] = ynew[e[first[second[i]]]].
    if (v->second.size() != 4) return std::nullopt;
    Perm all(4);
    for (size_t i = 0; i < 4; ++i) all[i] = before[static_cast<size_t>(v->second[i])];
    if (!passutil::isIdentityPermutation(all)) return std::nullopt;
    edit.remove = true;
  }
  edit.shape = sh->outputs[0]->shape;
  return edit;
}

// Known, equal extents.
bool sameKnown(int64_t a, int64_t b, int64_t c) { return a >= 0 && a == b && a == c; }

// Dim 0 of q, k and v equal at run time: known and equal, or unknown with one origin (passutil::sameDim).
bool sameBatch(ir::Value const* q, ir::Value const* k, ir::Value const* v) {
  return passutil::sameDim(q, 0, k, 0) && passutil::sameDim(q, 0, v, 0);
}

class FuseAttention final : public Pass {
 public:
  char const* name() const override { return "fuse_attention"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      for (auto const& owned : g.nodes()) {
        if (owned->op != ir::OpType::kSoftMax) continue;
        if (tryFuse(g, owned.get(), ctx)) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  bool tryFuse(ir::Graph& g, ir::Node* sm, PassContext const& ctx) {
    if (sm->inputs.size() != 1 || !sm->inputs[0] || sm->outputs.size() != 1) return false;
    ir::Value* s2 = sm->inputs[0];
    int32_t const rank = s2->shape.nbDims;
    if (rank < 2 || !sm->attrs.has("axis")) return false;
    int64_t axis = sm->attrs.getInt("axis", 0);
    if (axis != rank - 1 && axis != -1) return false;
    std::vector<ir::Node*> chain{sm};

    // Scores: [Add(., mask)] of [Mul/Div by a scalar] of MatMul(q, k).
    ir::Value* mask = nullptr;
    ir::Value* s = s2;
    if (isElementWise(s2->producer, Op::kSUM) && passutil::hasSingleUse(g, s2)) {
      ir::Node* add = s2->producer;
      for (int side = 0; side < 2 && !mask; ++side) {
        ir::Value* x = add->inputs[side];
        ir::Node* p = x->producer;
        bool scoreSide =
            p && (p->op == ir::OpType::kMatrixMultiply || isElementWise(p, Op::kPROD) || isElementWise(p, Op::kDIV));
        if (!scoreSide || !dimsEqual(x->shape, s2->shape) || add->inputs[1 - side] == x) continue;
        mask = add->inputs[1 - side];
        s = x;
      }
      if (!mask) return false;
      chain.push_back(add);
    }
    double scale = 1.0;
    auto [mmOut, post] = stripScale(g, s, chain);
    scale *= post;
    ir::Node* qk = mmOut->producer;
    if (!isPlainMatmul(qk) || !passutil::hasSingleUse(g, mmOut)) return false;
    int64_t const opB = qk->attrs.getInt("op_b", 0);
    if (opB != static_cast<int64_t>(MatrixOperation::kNONE) && opB != static_cast<int64_t>(MatrixOperation::kTRANSPOSE))
      return false;
    bool kTransposed = opB == static_cast<int64_t>(MatrixOperation::kNONE);
    chain.push_back(qk);
    auto [q, fq] = stripScale(g, qk->inputs[0], chain);
    auto [k, fk] = stripScale(g, qk->inputs[1], chain);
    scale *= fq * fk;
    if (!std::isfinite(scale)) return false;

    // Probabilities: p, or Where(IsNaN(p), 0, p); read only by MatMul(p, v).
    ir::Value* p = sm->outputs[0];
    if (p->isOutput) return false;
    bool nanToZero = false;
    std::vector<ir::Node*> users = g.users(p);
    if (users.size() == 2) {
      ir::Node* isNan = users[0]->op == ir::OpType::kUnary ? users[0] : users[1];
      ir::Node* sel = isNan == users[0] ? users[1] : users[0];
      if (isNan->op != ir::OpType::kUnary ||
          isNan->attrs.getInt("op", -1) != static_cast<int64_t>(UnaryOperation::kISNAN) || isNan->inputs.size() != 1 ||
          isNan->outputs.size() != 1 || sel->op != ir::OpType::kSelect || sel->inputs.size() != 3 ||
          sel->outputs.size() != 1 || sel->inputs[0] != isNan->outputs[0] ||
          !passutil::hasSingleUse(g, isNan->outputs[0]) || sel->inputs[2] != p || sel->inputs[1] == p ||
          scalarConstant(sel->inputs[1]) != 0.0 || !dimsEqual(sel->outputs[0]->shape, p->shape) ||
          sel->outputs[0]->dtype != p->dtype)
        return false;
      chain.push_back(isNan);
      chain.push_back(sel);
      p = sel->outputs[0];
      nanToZero = true;
    }
    ir::Node* pv = passutil::singleUser(g, p);
    if (!isPlainMatmul(pv) || pv->inputs[0] != p ||
        pv->attrs.getInt("op_b", 0) != static_cast<int64_t>(MatrixOperation::kNONE))
      return false;
    chain.push_back(pv);
    ir::Value* v = pv->inputs[1];
    ir::Value* y = pv->outputs[0];

    // What the kernels take: one float type, head dims multiples of 8 up to 128, a mask that does not enlarge
    // the scores.
    DataType const t = y->dtype;
    if (!isKernelType(t) || q->dtype != t || k->dtype != t || v->dtype != t || (mask && mask->dtype != t) ||
        s2->dtype != t || q->shape.nbDims < 2 || k->shape.nbDims < 2 || v->shape.nbDims < 2 ||
        !headDimOk(q->shape.d[q->shape.nbDims - 1]) || !headDimOk(v->shape.d[v->shape.nbDims - 1]))
      return false;
    if (mask && mask->shape.nbDims > rank) return false;
    // CPU builds: only where the CPU backend's fused loop (attention_cpu_tiled) is fast, and fp32 only (it takes
    // nothing else: fp16/bf16 attention would run on the fp64 reference, far slower than the unfused layers).
    if (ctx.cpuTarget && (!ctx.cpuFusedAttention || t != DataType::kFLOAT)) return false;

    // Layout 1 when the head-splitting Shuffles of q, k and v and the head-merging one of y, each read only by
    // the attention, leave no transposition once the attention reads and writes [B, S, H, D]; else layout 0.
    std::vector<ShuffleEdit> edits;
    bool bshd = false;
    if (rank == 4 && q->shape.nbDims == 4 && k->shape.nbDims == 4 && v->shape.nbDims == 4) {
      // No batch broadcast in layout 1: H known and equal (k^T's H is its dim 1 as well), B known and equal or
      // provably equal (one origin: projections of one input with a dynamic batch).
      bool const dimsOk = sameBatch(q, k, v) && sameKnown(q->shape.d[1], k->shape.d[1], v->shape.d[1]);
      auto eq = dimsOk ? absorbProducer(g, q, kSwapHeads) : std::nullopt;
      auto ek = eq ? absorbProducer(g, k, kTransposed ? kHeadsFromKT : kSwapHeads) : std::nullopt;
      auto ev = ek ? absorbProducer(g, v, kSwapHeads) : std::nullopt;
      auto ey = ev ? absorbConsumer(g, y, kSwapHeads) : std::nullopt;
      if (ey && eq->sh != ek->sh && eq->sh != ev->sh && ek->sh != ev->sh) {
        edits = {*eq, *ek, *ev, *ey};
        bshd = true;
      }
    }

    // k^T made by a Shuffle read only here (K's Transpose(0,2,3,1), or ViT's swap of the last two axes): the
    // kernel reads k untransposed, so the Shuffle keeps rows whole (0,2,1,3) or goes.
    std::vector<ir::Node*> extraRemoved;
    ir::Node* sh = k->producer;
    if (!bshd && kTransposed && sh && sh->op == ir::OpType::kShuffle && sh->inputs.size() == 1 && sh->inputs[0] &&
        sh->outputs.size() == 1 && !sh->attrs.has("reshape") &&
        passutil::isIdentityPermutation(sh->attrs.getInts("second_perm")) && passutil::hasSingleUse(g, k)) {
      std::vector<int64_t> perm = sh->attrs.getInts("first_perm");
      auto const r = static_cast<int64_t>(perm.size());
      if (r >= 2 && r == k->shape.nbDims && perm[static_cast<size_t>(r - 2)] == r - 1) {
        std::swap(perm[static_cast<size_t>(r - 2)], perm[static_cast<size_t>(r - 1)]);
        if (passutil::isIdentityPermutation(perm)) {
          extraRemoved.push_back(sh);
          k = sh->inputs[0];
        } else {
          sh->attrs.setInts("first_perm", perm);
          std::swap(k->shape.d[r - 2], k->shape.d[r - 1]);
        }
        kTransposed = false;
      }
    }

    ir::Value* yOut = y;  // the value the attention's output replaces
    Dims yShape = y->shape;
    if (bshd) {
      ir::Value** operand[3] = {&q, &k, &v};
      for (size_t i = 0; i < 3; ++i) {
        ShuffleEdit const& e = edits[i];
        if (e.remove) {
          *operand[i] = e.sh->inputs[0];
          extraRemoved.push_back(e.sh);
        } else {
          e.sh->attrs.erase("first_perm");
          e.sh->attrs.erase("second_perm");
          e.sh->outputs[0]->shape = e.shape;
        }
      }
      kTransposed = false;
      ShuffleEdit const& eo = edits[3];
      yShape = makeDims({y->shape.d[0], y->shape.d[2], y->shape.d[1], y->shape.d[3]});
      if (eo.remove) {
        yOut = eo.sh->outputs[0];
        extraRemoved.push_back(eo.sh);
      } else {
        eo.sh->attrs.erase("first_perm");
        eo.sh->attrs.erase("second_perm");
      }
    }

    std::vector<ir::Value*> inputs{q, k, v};
    if (mask) inputs.push_back(mask);
    ir::Node* att = g.addNode(ir::OpType::kAttention, g.uniqueNodeName(qk->name + "_attention"), inputs);
    att->attrs.setFloat("scale", scale);
    att->attrs.setInt("k_transposed", kTransposed ? 1 : 0);
    att->attrs.setInt("nan_to_zero", nanToZero ? 1 : 0);
    if (bshd) att->attrs.setInt("layout", 1);
    att->outputs[0]->dtype = t;
    att->outputs[0]->shape = yShape;
    for (ir::Node* n : extraRemoved) chain.push_back(n);
    for (ir::Node const* n : chain) {
      if (n->fusedFrom.empty()) att->fusedFrom.push_back(n->name);
      for (auto const& f : n->fusedFrom) att->fusedFrom.push_back(f);
    }
    passutil::log(ctx, strCat(name(), ": ", chain.size(), " layers from ", qk->describe(), " to ", pv->describe(),
                              " into ", att->describe()));
    passutil::replaceValue(g, yOut, att->outputs[0]);
    for (ir::Node* n : chain) g.removeNode(n);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseAttentionPass() { return std::make_unique<FuseAttention>(); }

}  // namespace kiln::builder
