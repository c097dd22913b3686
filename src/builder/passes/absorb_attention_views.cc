// torch.nn.MultiheadAttention's packed in-projection around a fused Attention (torchvision's ViT): the views and
// copies that split the in_proj output [S, B, 3E] into per-head q, k, v (Slices or Gathers, reshapes, transposes)
// and merge the heads back for the out_proj go; the Attention reads the in_proj output packed (layout 2 or 1) and
// writes y in the order the out_proj reads. Each chain is proven by running it on an index tensor (static shapes),
// once per distinct chain: identical chains of other layers reuse the verdict.
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "backends/reference/graph_interpreter.h"
#include "builder/passes/pass.h"
#include "ir/attention_layout.h"
#include "ir/text.h"

namespace kiln::builder {
namespace {

// Ops that only move elements (and whose other inputs are constants): the chains may hold them.
bool isDataMovement(ir::Node const* n) {
  if (!n || n->outputs.size() != 1 || n->inputs.empty() || !n->inputs[0]) return false;
  ir::OpType const op = n->op;
  if (op != ir::OpType::kShuffle && op != ir::OpType::kSlice && op != ir::OpType::kGather &&
      op != ir::OpType::kSqueeze && op != ir::OpType::kUnsqueeze && op != ir::OpType::kIdentity)
    return false;
  if (n->op == ir::OpType::kSlice && n->attrs.getInt("mode", 0) != 0) return false;  // no fill or wrap
  if (n->op == ir::OpType::kGather && n->attrs.getInt("mode", 0) != 0) return false;
  for (size_t i = 1; i < n->inputs.size(); ++i)
    if (n->inputs[i] && !passutil::constantData(n->inputs[i])) return false;
  return true;
}

bool isStaticDims(Dims const& d) {
  if (d.nbDims < 0) return false;
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return false;
  return true;
}

// The data-movement nodes from the first non-data-movement value (the source) to `x`, source first.
std::pair<ir::Value*, std::vector<ir::Node*>> chainTo(ir::Value* x) {
  std::vector<ir::Node*> chain;
  while (isDataMovement(x->producer) && chain.size() < 32) {
    chain.insert(chain.begin(), x->producer);
    x = x->producer->inputs[0];
  }
  return {x, chain};
}

// `chains` cloned onto an int32 input "probe" of shape `sourceShape` (their outputs the chains' ends). Nodes and
// constants are named by position, so that identical chains of different layers print alike.
Result<std::unique_ptr<ir::Graph>> probeGraph(ir::Value const* source, Dims const& sourceShape,
                                              std::vector<std::vector<ir::Node*>> const& chains) {
  auto g = std::make_unique<ir::Graph>();
  KILN_ASSIGN_OR_RETURN(ir::Value * in, g->addInput("probe", DataType::kINT32, sourceShape));
  std::map<ir::Value const*, ir::Value*> mapped{{source, in}};
  std::set<ir::Node const*> cloned;
  int nodes = 0, constants = 0;
  for (auto const& chain : chains) {
    for (ir::Node const* n : chain) {
      if (cloned.count(n)) continue;
      cloned.insert(n);
      std::vector<ir::Value*> ins;
      for (ir::Value* v : n->inputs) {
        if (!v) {
          ins.push_back(nullptr);
        } else if (auto it = mapped.find(v); it != mapped.end()) {
          ins.push_back(it->second);
        } else {
          ins.push_back(g->addConstant(strCat("c", constants++), *passutil::constantData(v))->output(0));
        }
      }
      ir::Node* c = g->addNode(n->op, strCat("n", nodes++), ins);
      c->attrs = n->attrs;
      mapped[n->outputs[0]] = c->outputs[0];
    }
    g->markOutput(chain.empty() ? in : mapped.at(chain.back()->outputs[0]));
  }
  return g;
}

// Runs a probe graph on its input holding each element's index: the chains' end values (an error when a chain
// cannot run there).
Result<std::vector<HostTensor>> runProbe(ir::Graph const& g) {
  Dims const& shape = g.inputs()[0]->shape;
  int64_t const count = volume(shape);
  std::vector<int32_t> iota(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) iota[static_cast<size_t>(i)] = static_cast<int32_t>(i);
  KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::make(DataType::kINT32, shape, iota));
  return backends::runGraphOnHost(g, {t});
}

// Values' shapes where every profile state agrees (ctx.profileInputs), inferred on the graph as it is now; empty
// without profiles or when inference fails there.
using FixedShapes = std::map<ir::Value const*, Dims>;
FixedShapes profileShapes(ir::Graph& g, PassContext const& ctx) {
  FixedShapes r;
  if (!ctx.profileInputs || ctx.profileInputs->empty() || !g.renumber().isOk()) return r;
  std::vector<ir::ShapeState> states;
  for (auto const& dims : *ctx.profileInputs) {
    if (dims.size() != g.inputs().size()) return r;
    ir::ShapeState st;
    st.resize(g.values().size());
    for (size_t i = 0; i < dims.size(); ++i) st.info[g.inputs()[i]->id] = {g.inputs()[i]->dtype, dims[i]};
    if (!ir::inferShapes(g, st, ctx.evaluator).isOk()) return {};
    states.push_back(std::move(st));
  }
  for (auto const& v : g.values()) {
    Dims const& first = states[0].info[v->id].shape;
    bool same = isStaticDims(first);
    for (size_t i = 1; same && i < states.size(); ++i) same = dimsEqual(states[i].info[v->id].shape, first);
    if (same) r[v.get()] = first;
  }
  return r;
}

// Elements the probes run through at most (the index tensor is int32 and the host runs every chain).
constexpr int64_t kMaxProbeElements = int64_t{1} << 27;

class AbsorbAttentionViews final : public Pass {
 public:
  char const* name() const override { return "absorb_attention_views"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      bool any = false;
      for (auto const& owned : g.nodes())
        any |= owned->op == ir::OpType::kAttention && owned->attrs.getInt("layout", 0) == 0;
      if (!any) break;
      // Recomputed after every rewrite: it holds the graph's values by address.
      FixedShapes const fixed = profileShapes(g, ctx);
      for (auto const& owned : g.nodes()) {
        if (owned->op != ir::OpType::kAttention) continue;
        KILN_ASSIGN_OR_RETURN(bool done, tryAbsorb(g, owned.get(), fixed, ctx));
        if (done) {
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  Result<bool> tryAbsorb(ir::Graph& g, ir::Node* att, FixedShapes const& fixed, PassContext const& ctx) {
    // A value's shape: the IR's, or where it has unknown dims, the one every profile fixes.
    auto const shapeOf = [&fixed](ir::Value const* v) {
      auto it = fixed.find(v);
      return isStaticDims(v->shape) || it == fixed.end() ? v->shape : it->second;
    };
    if (att->attrs.getInt("layout", 0) != 0 || att->attrs.getInt("packed_qkv", 0) != 0 || att->inputs.size() < 3 ||
        att->outputs.size() != 1)
      return false;
    // k^T ([N.., D, S]) as well: when the head split's reshape and K's transpose are one Shuffle, fuse_attention
    // leaves the transposition to the kernel.
    bool const kT = att->attrs.getInt("k_transposed", 0) != 0;
    ir::Value* y = att->outputs[0];
    Dims const qs = shapeOf(att->inputs[0]);
    int32_t const r = qs.nbDims;
    // Self-attention on one sequence, static shapes: q, k, v and y [N.., S, D] alike.
    if (r < 3 || !isStaticDims(qs) || !dimsEqual(shapeOf(y), qs)) return false;
    Dims kts = qs;
    std::swap(kts.d[r - 2], kts.d[r - 1]);
    if (!att->inputs[1] || !att->inputs[2] || !dimsEqual(shapeOf(att->inputs[1]), kT ? kts : qs) ||
        !dimsEqual(shapeOf(att->inputs[2]), qs))
      return false;
    if (att->inputs[0] == att->inputs[1] || att->inputs[0] == att->inputs[2] || att->inputs[1] == att->inputs[2])
      return false;
    ir::Value* mask = att->input(3);
    if (mask) {
      // Broadcast over every (batch, head) entry alike: it means the same to the head-major layouts.
      Dims const m = shapeOf(mask);
      if (m.nbDims > 4) return false;
      for (int32_t i = 0; i + 2 < m.nbDims; ++i)
        if (m.d[i] != 1) return false;
    }
    int64_t const s = qs.d[r - 2], d = qs.d[r - 1];
    int64_t n = 1;
    for (int32_t i = 0; i + 2 < r; ++i) n *= qs.d[i];

    // q, k and v: chains of data movement from one source [P0, P1, 3E], read only inside the chains.
    std::vector<std::vector<ir::Node*>> chains;
    ir::Value* source = nullptr;
    for (size_t i = 0; i < 3; ++i) {
      auto [src, chain] = chainTo(att->inputs[i]);
      if (chain.empty() || (source && src != source)) return false;
      source = src;
      chains.push_back(chain);
    }
    Dims const ps = shapeOf(source);
    if (ps.nbDims != 3 || !isStaticDims(ps) || ps.d[2] % 3 != 0 || volume(ps) > kMaxProbeElements) return false;
    int64_t const e = ps.d[2] / 3;
    if (d <= 0 || e % d != 0) return false;
    int64_t const h = e / d;
    // The chains' nodes once each, in chain order (the order fusedFrom records them in).
    std::set<ir::Node const*> inChains;
    std::vector<ir::Node*> chainNodes;
    for (auto const& c : chains)
      for (ir::Node* x : c)
        if (inChains.insert(x).second) chainNodes.push_back(x);
    for (ir::Node const* c : chainNodes)
      for (ir::Value const* o : c->outputs) {
        if (o->isOutput) return false;
        for (ir::Node const* u : g.users(o))
          if (u != att && !inChains.count(u)) return false;
      }
    // y: a chain of data movement whose every value only the next reads (the head merge before the out_proj).
    std::vector<ir::Node*> yChain;
    for (ir::Value* cur = y; yChain.size() < 32;) {
      ir::Node* u = passutil::singleUser(g, cur);
      if (!isDataMovement(u) || u->inputs[0] != cur) break;
      yChain.push_back(u);
      cur = u->outputs[0];
    }
    if (yChain.empty()) return false;
    ir::Value* z = yChain.back()->outputs[0];
    Dims const zs = shapeOf(z);
    if (!isStaticDims(zs) || volume(zs) != volume(qs)) return false;
    // The y view's dims: the IR's where known, one unknown left to the reshape's -1; else the profiles' (which the
    // run-time shapes then must match, as every layer built for them).
    int unknown = 0;
    for (int32_t i = 0; i < z->shape.nbDims; ++i) unknown += z->shape.d[i] < 0;
    Dims const yView = unknown <= 1 ? z->shape : zs;

    // Which layout the source is in: [S, B, 3E] (2) or [B, S, 3E] (1), with B * H = N; proven by the probes.
    // The verdict depends only on the probe graphs (ops, attributes, constants, the shapes they run at) and k^T, so
    // a chain identical to one proven before (every layer of a ViT) reuses its verdict instead of running again.
    auto qkvGraph = probeGraph(source, ps, chains);
    if (!qkvGraph.isOk()) return false;
    auto yGraph = probeGraph(y, qs, {yChain});
    if (!yGraph.isOk()) return false;
    ir::PrintOptions exact;
    exact.fullConstants = true;
    exact.annotations = false;
    std::string key = strCat(kT ? "kT\n" : "k\n", ir::printGraph(**qkvGraph, exact), ir::printGraph(**yGraph, exact));
    std::optional<int64_t> layout;
    auto known = verdicts_.find(key);
    bool const reused = known != verdicts_.end();
    if (reused) {
      layout = known->second;
    } else {
      auto qkv = runProbe(**qkvGraph);
      auto yz = qkv.isOk() ? runProbe(**yGraph) : Result<std::vector<HostTensor>>(qkv.status());
      probedElements_ += volume(ps) + volume(qs);
      for (int64_t l : {ir::kAttentionLayoutSbhd, ir::kAttentionLayoutBshd}) {
        if (!yz.isOk()) break;
        bool const seqFirst = l == ir::kAttentionLayoutSbhd;
        int64_t const ps0 = seqFirst ? ps.d[0] : ps.d[1], pb = seqFirst ? ps.d[1] : ps.d[0];
        if (ps0 != s || pb * h != n) continue;
        if (matches(*qkv, *yz, seqFirst, kT, pb, s, h, d, e)) {
          layout = l;
          break;
        }
      }
      verdicts_.emplace(std::move(key), layout);
    }
    if (!layout) return false;

    // [P0, P1, 3E] viewed as [P0, P1, 3, H, D], P0 and P1 copied (placeholder 0s): exact whatever they are.
    Dims const& pi = source->shape;
    bool const seqFirst = *layout == ir::kAttentionLayoutSbhd;
    int64_t const b = seqFirst ? pi.d[1] : pi.d[0], seq = seqFirst ? pi.d[0] : pi.d[1];
    ir::Node* view = g.addNode(ir::OpType::kShuffle, g.uniqueNodeName(att->name + "_qkv_view"), {source});
    view->attrs.setInts("reshape", {0, 0, 3, h, d});
    view->attrs.setInt("zero_is_placeholder", 1);
    view->outputs[0]->dtype = source->dtype;
    view->outputs[0]->shape = makeDims({pi.d[0], pi.d[1], 3, h, d});
    std::vector<ir::Value*> ins{view->outputs[0], nullptr, nullptr};
    if (mask) ins.push_back(mask);
    ir::Node* packed = g.addNode(ir::OpType::kAttention, g.uniqueNodeName(att->name + "_packed"), ins);
    packed->attrs = att->attrs;
    packed->attrs.setInt("layout", *layout);
    packed->attrs.setInt("packed_qkv", 1);
    packed->attrs.setInt("k_transposed", 0);
    packed->outputs[0]->dtype = y->dtype;
    packed->outputs[0]->shape = ir::attentionOutputDims(*layout, b, seq, h, d);
    ir::Node* out = g.addNode(ir::OpType::kShuffle, g.uniqueNodeName(att->name + "_y_view"), {packed->outputs[0]});
    std::vector<int64_t> zd(yView.d, yView.d + yView.nbDims);
    out->attrs.setInts("reshape", zd);
    out->attrs.setInt("zero_is_placeholder", 0);
    out->outputs[0]->dtype = z->dtype;
    out->outputs[0]->shape = yView;
    passutil::recordFusion(*packed, *att);
    for (ir::Node const* c : chainNodes) passutil::recordFusion(*view, *c);
    for (ir::Node const* c : yChain) passutil::recordFusion(*out, *c);
    passutil::log(ctx, strCat(name(), ": ", chainNodes.size(), " layers splitting ", source->name, " and ",
                              yChain.size(), " merging the heads around ", att->describe(), " into ",
                              packed->describe(), " (", ir::attentionLayoutName(*layout, true), "; ",
                              reused ? std::string("proven before for identical chains")
                                     : strCat("proven on ", volume(ps) + volume(qs), " elements"),
                              ", ", probedElements_, " probed in this pass so far)"));
    passutil::replaceValue(g, z, out->outputs[0]);
    for (ir::Node* c : yChain) g.removeNode(c);
    g.removeNode(att);
    for (ir::Node* c : chainNodes) g.removeNode(c);
    return true;
  }

  // Verdicts of the probes by their key (the printed probe graphs and k^T): the layout proven, or none. Kept for
  // the pass object's life (one pipeline of one build); the key holds everything the verdict depends on.
  std::map<std::string, std::optional<int64_t>> verdicts_;
  int64_t probedElements_ = 0;  // elements of the index tensors the probes ran on

  // The probes agree with the packed layout: q, k, v element (bh, s, d) (k^T's (bh, d, s) with kT) is source
  // element (s, b, slot, h, d) in the layout's order, and element i of the y chain's end is y element (b * H + h, s, d)
  // where (s, b, h, d) (or (b, s, h, d)) is i unraveled in the layout's y shape.
  static bool matches(std::vector<HostTensor> const& qkv, std::vector<HostTensor> const& yz, bool seqFirst, bool kT,
                      int64_t b, int64_t s, int64_t h, int64_t d, int64_t e) {
    for (int64_t slot = 0; slot < 3; ++slot) {
      HostTensor const& t = qkv[static_cast<size_t>(slot)];
      if (t.count() != b * h * s * d) return false;
      auto const* p = t.as<int32_t>();
      for (int64_t bh = 0; bh < b * h; ++bh)
        for (int64_t si = 0; si < s; ++si) {
          int64_t const bi = bh / h, hi = bh % h;
          int64_t const row = seqFirst ? si * b + bi : bi * s + si;
          int64_t const base = row * 3 * e + slot * e + hi * d;
          // k^T holds element (bh, s, d) at (bh, d, s).
          bool const transposed = kT && slot == 1;
          for (int64_t di = 0; di < d; ++di) {
            int64_t const at = transposed ? (bh * d + di) * s + si : (bh * s + si) * d + di;
            if (p[at] != base + di) return false;
          }
        }
    }
    HostTensor const& z = yz[0];
    if (z.count() != b * h * s * d) return false;
    auto const* p = z.as<int32_t>();
    for (int64_t i = 0; i < z.count(); i += d) {
      int64_t const row = i / (h * d), hi = (i / d) % h;
      int64_t const si = seqFirst ? row / b : row % s, bi = seqFirst ? row % b : row / s;
      int64_t const base = ((bi * h + hi) * s + si) * d;
      for (int64_t di = 0; di < d; ++di)
        if (p[i + di] != base + di) return false;
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createAbsorbAttentionViewsPass() { return std::make_unique<AbsorbAttentionViews>(); }

}  // namespace kiln::builder
