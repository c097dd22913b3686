// Chooses the memory format of 4-D float32/bf16 activations between oneDNN CPU layers (after tactic selection): a
// tensor that a oneDNN convolution, pooling, activation or element-wise op writes and that only such layers (or a
// oneDNN reduce) read, in slots that take formats, stays in the format oneDNN's convolutions prefer (channels-
// last or nChw16c) instead of plain NCHW, so consecutive layers pass it on without reorders (EfficientNet's
// conv -> sigmoid -> mul -> conv as well as ResNet's chains); every other tensor stays plain. Recorded per node in the
// attributes cpu_formats_in / cpu_formats_out (one entry per input / output, 0 plain), which the kernels read.
#include <algorithm>
#include <set>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

constexpr char kConvTactic[] = "convolution_onednn_direct";
constexpr char kWinograd4x3Tactic[] = "convolution_onednn_winograd_4x3";
constexpr char kWinograd2x3Tactic[] = "convolution_onednn_winograd_2x3";
constexpr char kMatmul1x1Tactic[] = "convolution_onednn_matmul_1x1";
constexpr char kPoolTactic[] = "pooling_onednn_direct";
constexpr char kActivationTactic[] = "activation_onednn_eltwise";
constexpr char kBinaryTactic[] = "elementwise_onednn_binary";
constexpr char kReduceTactic[] = "reduce_onednn";
constexpr char kCastTactic[] = "cast_onednn_reorder";

// Layers whose oneDNN kernel reads (some inputs) in a recorded format.
bool isFormatAware(ir::Node const& n) {
  if (n.tactic == kConvTactic || n.tactic == kWinograd4x3Tactic || n.tactic == kWinograd2x3Tactic ||
      n.tactic == kMatmul1x1Tactic)
    return n.op == ir::OpType::kConvolution;
  if (n.tactic == kPoolTactic) return n.op == ir::OpType::kPooling;
  if (n.tactic == kActivationTactic) return n.op == ir::OpType::kActivation;
  if (n.tactic == kBinaryTactic) return n.op == ir::OpType::kElementWise;
  if (n.tactic == kReduceTactic) return n.op == ir::OpType::kReduce;
  // float32 <-> bf16 element by element: a bf16 region's edge keeps the format (EfficientNet's bf16 convolution
  // -> Cast -> float32 global pooling would otherwise leave every such convolution's output plain).
  if (n.tactic == kCastTactic) return n.op == ir::OpType::kCast;
  return false;
}

// Layers that may also write their output in a recorded format (a reduction's output stays plain).
bool writesFormat(ir::Node const& n) { return isFormatAware(n) && n.op != ir::OpType::kReduce; }

bool fullShape(ir::Node const& n, size_t i) {
  return i < n.inputs.size() && n.inputs[i] && !n.outputs.empty() &&
         dimsEqual(n.inputs[i]->shape, n.outputs[0]->shape);
}

// Input slots of a format-aware node that may take a non-plain activation: the data input, a convolution's
// residual, an element-wise operand of the output's shape.
bool formatSlot(ir::Node const& n, size_t i) {
  if (n.op == ir::OpType::kConvolution) return i == 0 || i == 3;
  if (n.op == ir::OpType::kElementWise) return fullShape(n, i);
  return i == 0;
}

// Tensors of a node that must share one format (pooling, activation and cast: x and y; element-wise: y and its
// full-shape operands); empty when the node's kernel converts between formats (convolution, reduce).
std::vector<ir::Value const*> sameFormatGroup(ir::Node const& n) {
  std::vector<ir::Value const*> g;
  if (n.op == ir::OpType::kPooling || n.op == ir::OpType::kActivation || n.op == ir::OpType::kCast) {
    if (!n.inputs.empty() && n.inputs[0] && !n.outputs.empty()) g = {n.inputs[0], n.outputs[0]};
  } else if (n.op == ir::OpType::kElementWise && !n.outputs.empty()) {
    g.push_back(n.outputs[0]);
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (fullShape(n, i)) g.push_back(n.inputs[i]);
  }
  return g;
}

class AssignCpuFormats final : public Pass {
 public:
  explicit AssignCpuFormats(int64_t format) : format_(format) {}
  char const* name() const override { return "assign_cpu_formats"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    if (format_ == 0) return false;
    // The block along C a format needs (1 for channels-last).
    int64_t block = format_ == 1 ? 1 : format_;
    if (block != 1 && block != 8 && block != 16) return invalidArgument(name(), ": unknown activation format ", format_);
    std::set<ir::Value const*> chosen;
    for (auto const& v : g.values()) {
      if (eligible(g, *v, block)) chosen.insert(v.get());
    }
    // A pooling, an activation, an element-wise op read and write one format: where only some of their tensors
    // could change, none does.
    for (bool again = true; again;) {
      again = false;
      for (auto const& n : g.nodes()) {
        if (!isFormatAware(*n)) continue;
        std::vector<ir::Value const*> group = sameFormatGroup(*n);
        size_t in = 0;
        for (ir::Value const* v : group) in += chosen.count(v);
        if (in != 0 && in != group.size()) {
          for (ir::Value const* v : group) chosen.erase(v);
          again = true;
        }
      }
    }
    bool changed = false;
    for (auto const& n : g.nodes()) {
      if (!isFormatAware(*n)) continue;
      std::vector<int64_t> in(n->inputs.size(), 0), out(n->outputs.size(), 0);
      bool any = false;
      for (size_t i = 0; i < n->inputs.size(); ++i)
        if (n->inputs[i] && chosen.count(n->inputs[i]) && formatSlot(*n, i)) {
          in[i] = format_;
          any = true;
        }
      for (size_t i = 0; i < n->outputs.size(); ++i)
        if (chosen.count(n->outputs[i])) {
          out[i] = format_;
          any = true;
        }
      if (!any) continue;
      n->attrs.setInts("cpu_formats_in", in);
      n->attrs.setInts("cpu_formats_out", out);
      passutil::log(ctx, strCat(name(), ": ", n->describe(), " formats in [", joinInts(in), "] out [", joinInts(out),
                                "]"));
      changed = true;
    }
    return changed;
  }

 private:
  static std::string joinInts(std::vector<int64_t> const& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += strCat(i ? "," : "", v[i]);
    return s;
  }

  // A tensor between format-aware layers only: written as a oneDNN layer's output 0, read only in format slots of
  // such layers, float32 or bf16 (the bf16 convolutions and pooling) [N, C, H, W] with C known and divisible by the
  // block, never a network input or output.
  static bool eligible(ir::Graph const& g, ir::Value const& v, int64_t block) {
    if (v.isInput || v.isOutput || !v.producer || !writesFormat(*v.producer)) return false;
    if (v.producer->outputs.empty() || v.producer->outputs[0] != &v) return false;
    if ((v.dtype != DataType::kFLOAT && v.dtype != DataType::kBF16) || v.shape.nbDims != 4 || v.shape.d[1] <= 0 ||
        v.shape.d[1] % block != 0)
      return false;
    std::vector<ir::Node*> users = g.users(&v);
    if (users.empty()) return false;
    for (ir::Node const* u : users) {
      if (!isFormatAware(*u) || u->inputs.empty() || u->outputs.empty()) return false;
      ir::Value const* shaped = u->op == ir::OpType::kElementWise ? u->outputs[0] : u->inputs[0];
      if (!shaped || shaped->shape.nbDims != 4) return false;
      for (size_t i = 0; i < u->inputs.size(); ++i)
        if (u->inputs[i] == &v && !formatSlot(*u, i)) return false;
    }
    return true;
  }

  int64_t format_;
};

}  // namespace

std::unique_ptr<Pass> createAssignCpuFormatsPass(int64_t format) { return std::make_unique<AssignCpuFormats>(format); }

}  // namespace kiln::builder
