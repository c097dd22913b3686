// Channels-last layout assignment for GPU builds (see assign_formats.h): a forward walk in topological order
// that keeps, per value, the layout it is stored in and converts through one shared Reformat per value and
// layout where a consumer reads another layout.
#include "builder/assign_formats.h"

#include <algorithm>
#include <map>
#include <utility>

#include "backends/backend.h"
#include "backends/device.h"

namespace kiln::builder {
namespace {

using ir::Graph;
using ir::Node;
using ir::OpType;
using ir::Value;

bool isReducedFloat(DataType t) { return t == DataType::kHALF || t == DataType::kBF16; }

// Layers whose result at each element depends only on the inputs' elements at the same position, so they run
// in any layout when all inputs share the output's shape.
bool isElementWise(OpType op) {
  return op == OpType::kActivation || op == OpType::kUnary || op == OpType::kElementWise || op == OpType::kCast ||
         op == OpType::kIdentity || op == OpType::kPointwiseFused;
}

class Assigner {
 public:
  Assigner(Graph& g, FormatContext const& ctx) : g_(g), ctx_(ctx) {}

  Result<int> run() {
    KILN_ASSIGN_OR_RETURN(std::vector<Node*> order, g_.topoOrder());
    int assigned = 0;
    for (Node* n : order) {
      if (n->op == OpType::kConstant || n->op == OpType::kReformat || !n->subgraphs.empty()) continue;
      n->attrs.erase("format");
      std::vector<size_t> hwcInputs;
      if (wantsHwc(*n, hwcInputs) && supportedAsHwc(*n)) {
        n->attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
        for (size_t i : hwcInputs) n->inputs[i] = convert(n->inputs[i], TensorFormat::kHWC);
        // A channels-last reduction over both spatial axes (GlobalAveragePool) writes bytes that are its output's
        // linear layout as well (H = W = 1 or gone): consumers read it as kLINEAR with no Reformat.
        for (Value* v : n->outputs) format_[v] = n->op == OpType::kReduce ? TensorFormat::kLINEAR : TensorFormat::kHWC;
        ++assigned;
        continue;
      }
      for (Value*& in : n->inputs)
        if (in && formatOf(in) != TensorFormat::kLINEAR) in = convert(in, TensorFormat::kLINEAR);
    }
    // Graph outputs are kLINEAR: the kLINEAR copy of a channels-last output (made now if no consumer needed
    // one) takes its place (name, output mark and position), while the channels-last value keeps its users.
    for (Value* v : std::vector<Value*>(g_.outputs())) {
      if (formatOf(v) == TensorFormat::kLINEAR) continue;
      Value* linear = convert(v, TensorFormat::kLINEAR);
      std::vector<Node*> users = g_.users(v);
      g_.replaceAllUses(v, linear);
      for (Node* u : users)
        for (Value*& in : u->inputs)
          if (in == linear) in = v;
    }
    foldCastsIntoReformats();
    return assigned;
  }

 private:
  TensorFormat formatOf(Value* v) const {
    auto it = format_.find(v);
    return it == format_.end() ? TensorFormat::kLINEAR : it->second;
  }

  static void setReformat(Node& r, TensorFormat from, TensorFormat to) {
    r.attrs.setInt("from", static_cast<int64_t>(from));
    r.attrs.setInt("to", static_cast<int64_t>(to));
  }

  // `v` in layout `to`: itself, or the output of the (one, shared) Reformat of v into `to`.
  Value* convert(Value* v, TensorFormat to) {
    TensorFormat from = formatOf(v);
    if (from == to) return v;
    auto key = std::make_pair(v, to);
    auto it = converted_.find(key);
    if (it != converted_.end()) return it->second;
    std::string suffix = to == TensorFormat::kHWC ? "_to_hwc" : "_to_linear";
    Node* r = g_.addNode(OpType::kReformat, g_.uniqueNodeName(v->name + suffix), {v}, 1);
    setReformat(*r, from, to);
    Value* out = r->outputs[0];
    (void)g_.renameValue(out, g_.uniqueValueName(v->name + suffix));
    out->dtype = v->dtype;
    out->shape = v->shape;
    format_[out] = to;
    converted_[key] = out;
    return out;
  }

  // A float Cast whose only reader is a kLINEAR <-> kHWC Reformat (ResNet's fp32 input cast to fp16 before the
  // channels-last stem) folds into it: the Reformat converts as it moves (attribute `dtype`, as TensorRT's
  // reformatting layers change precision), reading and writing the tensor once instead of twice. Only where a
  // device tactic takes the converting Reformat; the Cast is removed.
  void foldCastsIntoReformats() {
    auto isFloat = [](DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; };
    std::vector<Node*> reformats;
    for (auto const& n : g_.nodes())
      if (n->op == OpType::kReformat) reformats.push_back(n.get());
    for (Node* r : reformats) {
      Value* v = r->input(0);
      Node* c = v ? v->producer : nullptr;
      if (!c || c->op != OpType::kCast || v->isOutput || v->shape.nbDims != 4 || r->attrs.has("dtype")) continue;
      int64_t const from = r->attrs.getInt("from", 0), to = r->attrs.getInt("to", 0);
      int64_t const lin = static_cast<int64_t>(TensorFormat::kLINEAR), hwc = static_cast<int64_t>(TensorFormat::kHWC);
      if (!((from == lin && to == hwc) || (from == hwc && to == lin))) continue;
      Value* src = c->input(0);
      if (!src || src->id < 0 || static_cast<size_t>(src->id) >= ctx_.opt->info.size() || !isFloat(src->dtype) ||
          !isFloat(v->dtype) || src->dtype == v->dtype)
        continue;
      std::vector<Node*> users = g_.users(v);
      if (std::any_of(users.begin(), users.end(), [r](Node* u) { return u != r; })) continue;
      r->inputs[0] = src;
      r->attrs.setInt("dtype", static_cast<int64_t>(v->dtype));
      if (!deviceTakes(*r, ctx_.opt->info[src->id], {v->dtype, ctx_.opt->info[src->id].shape})) {
        r->inputs[0] = v;
        r->attrs.erase("dtype");
        continue;
      }
      r->fusedFrom.push_back(c->name);
      g_.removeNode(c);
    }
  }

  // True when a device tactic (not a host fallback) takes `n` with these input and output types and shapes.
  bool deviceTakes(Node const& n, ir::TensorInfo const& in, ir::TensorInfo const& out) const {
    for (backends::Tactic const* t :
         backends::TacticRegistry::instance().candidates(n, {in}, {out}, ctx_.device, ctx_.sources))
      if (!backends::isHostFallback(*t)) return true;
    return false;
  }

  // Every profile shape of value `v`.
  std::vector<Dims> shapesOf(Value const* v) const {
    std::vector<Dims> r;
    for (ir::ShapeState const* s : ctx_.states) r.push_back(s->info[v->id].shape);
    return r;
  }

  // Whether `n` would run channels-last, and which inputs it then reads channels-last.
  bool wantsHwc(Node const& n, std::vector<size_t>& hwcInputs) const {
    Value const* x = n.input(0);
    if (!x || x->shape.nbDims != 4 || n.outputs.size() != 1 || !isReducedFloat(x->dtype)) return false;
    if (n.op == OpType::kConvolution) {
      for (size_t i : {size_t{0}, size_t{1}, size_t{3}})
        if (n.input(i) && n.input(i)->shape.nbDims == 4) hwcInputs.push_back(i);
      return true;
    }
    if (n.op == OpType::kPooling) {
      hwcInputs.push_back(0);
      return true;
    }
    if (n.op == OpType::kReduce) {
      // Only where the input already is channels-last (the tactic checks the axes): no layout change starts here.
      if (formatOf(const_cast<Value*>(x)) != TensorFormat::kHWC) return false;
      hwcInputs.push_back(0);
      return true;
    }
    if (!isElementWise(n.op)) return false;
    // Only where a channels-last input comes in: a chain of element-wise layers never starts a layout change.
    bool anyHwc = false;
    std::vector<Dims> outShapes = shapesOf(n.outputs[0]);
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      Value* in = n.inputs[i];
      if (!in) continue;
      std::vector<Dims> s = shapesOf(in);
      bool same = true, single = true;
      for (size_t k = 0; k < s.size(); ++k) {
        same = same && dimsKnown(s[k]) && dimsEqual(s[k], outShapes[k]);
        single = single && dimsKnown(s[k]) && volume(s[k]) == 1;
      }
      if (single && !same) continue;  // one element broadcasts the same in every layout
      if (!same) return false;
      hwcInputs.push_back(i);
      anyHwc = anyHwc || formatOf(in) == TensorFormat::kHWC;
    }
    return anyHwc;
  }

  // True when a format-aware tactic takes `n` as kHWC at the opt shapes.
  bool supportedAsHwc(Node& n) const {
    n.attrs.setInt("format", static_cast<int64_t>(TensorFormat::kHWC));
    std::vector<ir::TensorInfo> in, out;
    for (Value* v : n.inputs) {
      ir::TensorInfo t;
      if (v)
        t = ctx_.opt->info[v->id];
      else
        t.shape.nbDims = -1;
      in.push_back(t);
    }
    for (Value* v : n.outputs) out.push_back(ctx_.opt->info[v->id]);
    bool ok = !backends::TacticRegistry::instance().candidates(n, in, out, ctx_.device, ctx_.sources).empty();
    n.attrs.erase("format");
    return ok;
  }

  Graph& g_;
  FormatContext const& ctx_;
  std::map<Value*, TensorFormat> format_;
  std::map<std::pair<Value*, TensorFormat>, Value*> converted_;
};

}  // namespace

Result<int> assignFormats(Graph& g, FormatContext const& ctx) {
  if (!ctx.opt) return internalError("assignFormats: no shapes");
  return Assigner(g, ctx).run();
}

}  // namespace kiln::builder
