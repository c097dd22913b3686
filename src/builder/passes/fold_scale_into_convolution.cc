// Folds a per-channel affine op after a Convolution into its weights and bias: Scale (kUNIFORM, or kCHANNEL on
// axis 1, without power) -- batch normalization arrives from ONNX as one -- and ElementWise kSUM/kPROD with a
// constant that varies only along the channel axis.
#include <optional>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

// A per-output-channel affine map y' = y * mul[k] + add[k].
struct ChannelAffine {
  std::vector<double> mul, add;
};

// Values of a constant that is a scalar (count 1) or holds K values along `axis` of a rank-`rank` tensor and is 1
// elsewhere (numpy right alignment); nullopt when it varies along any other axis or does not broadcast.
std::optional<std::vector<double>> perChannel(HostTensor const& c, int32_t rank, int32_t axis, int64_t k) {
  Dims const& s = c.shape();
  if (!isFloatType(c.dtype()) || s.nbDims > rank) return std::nullopt;
  int64_t channelDim = 1;
  for (int32_t i = 0; i < s.nbDims; ++i) {
    int32_t yAxis = rank - s.nbDims + i;
    if (yAxis == axis) channelDim = s.d[i];
    else if (s.d[i] != 1) return std::nullopt;
  }
  std::vector<double> v(static_cast<size_t>(k));
  if (channelDim == 1) {
    std::fill(v.begin(), v.end(), c.doubleAt(0));
  } else if (channelDim == k) {
    for (int64_t i = 0; i < k; ++i) v[static_cast<size_t>(i)] = c.doubleAt(i);
  } else {
    return std::nullopt;
  }
  return v;
}

// The affine map of a Scale node on a rank-`rank` tensor with K channels, if it is one.
std::optional<ChannelAffine> scaleAffine(ir::Node const& s, int32_t rank, int64_t k) {
  int64_t mode = s.attrs.getInt("mode", static_cast<int64_t>(ScaleMode::kUNIFORM));
  bool uniform = mode == static_cast<int64_t>(ScaleMode::kUNIFORM);
  if (!uniform) {
    if (mode != static_cast<int64_t>(ScaleMode::kCHANNEL)) return std::nullopt;
    auto axis = normalizeAxis(s.attrs.getInt("channel_axis", rank >= 2 ? 1 : 0), rank);
    if (!axis.isOk() || *axis != 1) return std::nullopt;
  }
  ChannelAffine a{std::vector<double>(static_cast<size_t>(k), 1.0), std::vector<double>(static_cast<size_t>(k), 0.0)};
  for (size_t i = 1; i < s.inputs.size(); ++i) {
    if (!s.inputs[i]) continue;
    HostTensor const* c = passutil::constantData(s.inputs[i]);
    if (!c || !isFloatType(c->dtype())) return std::nullopt;
    int64_t n = c->count();
    if (n != (uniform ? 1 : k)) return std::nullopt;
    if (i == 3) {  // power: only the identity power folds
      for (int64_t j = 0; j < n; ++j)
        if (c->doubleAt(j) != 1.0) return std::nullopt;
      continue;
    }
    std::vector<double>& dst = i == 1 ? a.add : a.mul;
    for (int64_t j = 0; j < k; ++j) dst[static_cast<size_t>(j)] = c->doubleAt(uniform ? 0 : j);
  }
  // (x * scale + shift): the shift is not scaled.
  return a;
}

// The affine map of an ElementWise kSUM/kPROD of `y` with a per-channel constant, if it is one.
std::optional<ChannelAffine> elementWiseAffine(ir::Node const& e, ir::Value const* y, int64_t k) {
  if (e.inputs.size() != 2 || !e.inputs[0] || !e.inputs[1]) return std::nullopt;
  int64_t op = e.attrs.getInt("op", -1);
  bool sum = op == static_cast<int64_t>(ElementWiseOperation::kSUM);
  if (!sum && op != static_cast<int64_t>(ElementWiseOperation::kPROD)) return std::nullopt;
  ir::Value const* other = e.inputs[0] == y ? e.inputs[1] : e.inputs[0];
  if (other == y) return std::nullopt;
  HostTensor const* c = passutil::constantData(other);
  if (!c) return std::nullopt;
  // The result must have y's shape and type: a constant that broadcasts y to more dims does not fold.
  if (!dimsEqual(e.outputs[0]->shape, y->shape) || e.outputs[0]->dtype != y->dtype) return std::nullopt;
  auto v = perChannel(*c, y->shape.nbDims, 1, k);
  if (!v) return std::nullopt;
  ChannelAffine a{std::vector<double>(static_cast<size_t>(k), 1.0), std::vector<double>(static_cast<size_t>(k), 0.0)};
  (sum ? a.add : a.mul) = *v;
  return a;
}

class FoldScaleIntoConvolution final : public Pass {
 public:
  char const* name() const override { return "fold_scale_into_convolution"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    for (bool again = true; again;) {
      again = false;
      KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
      for (ir::Node* conv : order) {
        KILN_ASSIGN_OR_RETURN(bool done, tryFold(g, *conv, ctx));
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
  Result<bool> tryFold(ir::Graph& g, ir::Node& conv, PassContext const& ctx) {
    if (conv.op != ir::OpType::kConvolution || conv.outputs.size() != 1) return false;
    if (conv.attrs.getInt("activation", -1) != -1 || conv.attrs.getInt("cpu_swish", 0) != 0 || conv.input(3))
      return false;  // the affine map comes after
    HostTensor const* w = passutil::constantData(conv.input(1));
    HostTensor const* b = conv.input(2) ? passutil::constantData(conv.input(2)) : nullptr;
    if (!w || !isFloatType(w->dtype()) || w->shape().nbDims < 1 || (conv.input(2) && !b)) return false;
    if (b && !isFloatType(b->dtype())) return false;
    ir::Value* y = conv.outputs[0];
    ir::Node* user = passutil::singleUser(g, y);
    if (!user || user->outputs.size() != 1 || user->input(0) == nullptr) return false;
    int64_t k = w->shape().d[0];
    if (k <= 0 || (b && b->count() != k)) return false;
    std::optional<ChannelAffine> a;
    if (user->op == ir::OpType::kScale && user->inputs[0] == y) a = scaleAffine(*user, y->shape.nbDims, k);
    else if (user->op == ir::OpType::kElementWise) a = elementWiseAffine(*user, y, k);
    if (!a) return false;
    if (user->outputs[0]->dtype != y->dtype) return false;

    int64_t per = w->count() / k;
    KILN_ASSIGN_OR_RETURN(HostTensor nw, HostTensor::allocate(w->dtype(), w->shape(), "folded weights", ctx.budget));
    DataType bt = b ? b->dtype() : w->dtype();
    KILN_ASSIGN_OR_RETURN(HostTensor nb, HostTensor::allocate(bt, makeDims({k}), "folded bias", ctx.budget));
    KILN_RETURN_IF_ERROR(dispatchType(w->dtype(), [&](auto tag) {
      using S = decltype(tag);
      S* dst = static_cast<S*>(nw.mutableData());
      for (int64_t i = 0; i < w->count(); ++i)
        dst[i] = fromDouble<S>(w->doubleAt(i) * a->mul[static_cast<size_t>(i / per)]);
      return Status::ok();
    }));
    KILN_RETURN_IF_ERROR(dispatchType(bt, [&](auto tag) {
      using S = decltype(tag);
      S* dst = static_cast<S*>(nb.mutableData());
      for (int64_t i = 0; i < k; ++i) {
        double old = b ? b->doubleAt(i) : 0.0;
        dst[i] = fromDouble<S>(old * a->mul[static_cast<size_t>(i)] + a->add[static_cast<size_t>(i)]);
      }
      return Status::ok();
    }));
    ir::Node* wNode = g.addConstant(g.uniqueNodeName(conv.name + "_folded_weights"), std::move(nw));
    ir::Node* bNode = g.addConstant(g.uniqueNodeName(conv.name + "_folded_bias"), std::move(nb));
    if (conv.inputs.size() < 3) conv.inputs.resize(3, nullptr);
    conv.inputs[1] = wNode->outputs[0];
    conv.inputs[2] = bNode->outputs[0];
    passutil::log(ctx, strCat(name(), ": folded ", user->describe(), " into ", conv.describe()));
    passutil::recordFusion(conv, *user);
    passutil::replaceValue(g, user->outputs[0], y);
    g.removeNode(user);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFoldScaleIntoConvolutionPass() { return std::make_unique<FoldScaleIntoConvolution>(); }

}  // namespace kiln::builder
