// Bias, residual and activation fusion into Convolution and MatrixMultiply: a following constant per-channel
// (conv) or last-dim (matmul) kSUM becomes the bias input, a following same-shape kSUM of an earlier tensor
// becomes the residual input (input 3, of both ops), and a following Activation becomes the activation attributes.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "builder/passes/dim_origin.h"
#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

bool isSum(ir::Node const& n) {
  return n.op == ir::OpType::kElementWise && n.inputs.size() == 2 && n.inputs[0] && n.inputs[1] &&
         n.attrs.getInt("op", -1) == static_cast<int64_t>(ElementWiseOperation::kSUM);
}

// A constant's values when it is 1 along every axis of a rank-`rank` tensor except `axis`, where it has 1 or n
// values (right-aligned, numpy broadcasting); the result has n entries.
std::optional<std::vector<double>> valuesAlong(HostTensor const& c, int32_t rank, int32_t axis, int64_t n) {
  Dims const& s = c.shape();
  if (!isFloatType(c.dtype()) || s.nbDims > rank || n < 0) return std::nullopt;
  int64_t along = 1;
  for (int32_t i = 0; i < s.nbDims; ++i) {
    if (rank - s.nbDims + i == axis) along = s.d[i];
    else if (s.d[i] != 1) return std::nullopt;
  }
  if (along != 1 && along != n) return std::nullopt;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = c.doubleAt(along == 1 ? 0 : i);
  return v;
}

// True when the matmul `mm` looks like one of attention's two products, which fuse_attention may still turn into
// an Attention node (its GPU re-run after profile constants comes after this pass): q k^T whose sum (the mask)
// feeds a SoftMax, or p v with p from a SoftMax (or its NaN cleanup, a Select). A residual fused there would hide
// the mask from that pass, or be dropped by it.
bool partOfAttention(ir::Graph const& g, ir::Node const& mm, ir::Node const& sum) {
  for (ir::Node const* u : g.users(sum.outputs[0]))
    if (u->op == ir::OpType::kSoftMax) return true;
  ir::Node const* p = mm.input(0) ? mm.input(0)->producer : nullptr;
  return p && (p->op == ir::OpType::kSoftMax || p->op == ir::OpType::kSelect);
}

class FuseBiasActivation final : public Pass {
 public:
  char const* name() const override { return "fuse_bias_activation"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
      std::unordered_map<ir::Node const*, size_t> position;
      for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
      for (ir::Node* n : order) {
        if (n->op != ir::OpType::kConvolution && n->op != ir::OpType::kMatrixMultiply) continue;
        // (A fused swish comes last: nothing may be fused after it.)
        if (n->outputs.size() != 1 || n->attrs.getInt("activation", -1) != -1 || n->attrs.getInt("cpu_swish", 0) != 0)
          continue;
        ir::Value* y = n->outputs[0];
        ir::Node* user = passutil::singleUser(g, y);
        if (!user || user->outputs.size() != 1 || user->outputs[0]->dtype != y->dtype) continue;
        KILN_ASSIGN_OR_RETURN(bool done, tryFuse(g, *n, *user, position, ctx));
        if (done) {
          passutil::recordFusion(*n, *user);
          passutil::replaceValue(g, user->outputs[0], y);
          g.removeNode(user);
          again = changed = true;
          break;
        }
      }
    }
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  // Rewrites `n` to also do `user`'s work (the caller then removes `user`); false when the pattern does not apply.
  Result<bool> tryFuse(ir::Graph& g, ir::Node& n, ir::Node const& user,
                       std::unordered_map<ir::Node const*, size_t> const& position, PassContext const& ctx) {
    ir::Value* y = n.outputs[0];
    bool conv = n.op == ir::OpType::kConvolution;
    if (user.op == ir::OpType::kActivation) {
      if (user.inputs.size() != 1 || user.inputs[0] != y) return false;
      n.attrs.setInt("activation", user.attrs.getInt("type", 0));
      n.attrs.setFloat("act_alpha", user.attrs.getFloat("alpha", 0.0));
      n.attrs.setFloat("act_beta", user.attrs.getFloat("beta", 0.0));
      passutil::log(ctx, strCat(name(), ": fused ", user.describe(), " into ", n.describe()));
      return true;
    }
    if (!isSum(user) || !dimsEqual(user.outputs[0]->shape, y->shape)) return false;
    ir::Value* other = user.inputs[0] == y ? user.inputs[1] : user.inputs[0];
    if (other == y) return false;
    int32_t rank = y->shape.nbDims;
    if (HostTensor const* c = passutil::constantData(other)) {
      if (c->dtype() != y->dtype) return false;
      if (conv) {
        // Per-channel constant -> (added to) the bias.
        if (rank < 2 || y->shape.d[1] < 0) return false;
        int64_t k = y->shape.d[1];
        auto v = valuesAlong(*c, rank, 1, k);
        if (!v) return false;
        HostTensor const* old = n.input(2) ? passutil::constantData(n.input(2)) : nullptr;
        if (n.input(2) && (!old || old->count() != k)) return false;
        DataType bt = old ? old->dtype() : c->dtype();
        KILN_ASSIGN_OR_RETURN(HostTensor b, HostTensor::allocate(bt, makeDims({k}), "fused bias", ctx.budget));
        KILN_RETURN_IF_ERROR(dispatchType(bt, [&](auto tag) {
          using S = decltype(tag);
          S* dst = static_cast<S*>(b.mutableData());
          for (int64_t i = 0; i < k; ++i) dst[i] = fromDouble<S>((old ? old->doubleAt(i) : 0.0) + (*v)[i]);
          return Status::ok();
        }));
        ir::Node* bNode = g.addConstant(g.uniqueNodeName(n.name + "_bias"), std::move(b));
        if (n.inputs.size() < 3) n.inputs.resize(3, nullptr);
        n.inputs[2] = bNode->outputs[0];
      } else {
        // Constant over the last dim -> the matmul's bias input (kept as it is: it broadcasts to y).
        if (n.input(2) || rank < 1) return false;
        if (y->shape.d[rank - 1] < 0 || !valuesAlong(*c, rank, rank - 1, y->shape.d[rank - 1])) return false;
        n.inputs.resize(3, nullptr);
        n.inputs[2] = other;
      }
      passutil::log(ctx, strCat(name(), ": fused bias ", user.describe(), " into ", n.describe()));
      return true;
    }
    // A residual: a computed tensor of y's shape, ready before the conv or matmul runs. Unknown dims must be
    // proven equal (one origin): two independent -1s may be 1 and N at run time, which the sum broadcasts and the
    // fused residual does not.
    if (n.input(3) || other->dtype != y->dtype || !passutil::sameShape(other, y)) return false;
    if (!conv && partOfAttention(g, n, user)) return false;
    if (other->producer) {
      auto pOther = position.find(other->producer);
      auto pConv = position.find(&n);
      if (pOther == position.end() || pConv == position.end() || pOther->second >= pConv->second) return false;
    } else if (!other->isInput) {
      return false;
    }
    n.inputs.resize(4, nullptr);
    n.inputs[3] = other;
    passutil::log(ctx, strCat(name(), ": fused residual ", user.describe(), " into ", n.describe()));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseBiasActivationPass() { return std::make_unique<FuseBiasActivation>(); }

}  // namespace kiln::builder
