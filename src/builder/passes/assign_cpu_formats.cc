// Chooses the memory format of 4-D float32 activations between oneDNN CPU layers (after tactic selection): a
// tensor that a oneDNN convolution or pooling writes and that only such layers read (as their data or residual
// input) stays in the format oneDNN's convolutions prefer (e.g. nChw16c) instead of plain NCHW, so consecutive
// convolutions pass it on without reorders; every other tensor stays plain. Recorded per node in the attributes
// cpu_formats_in / cpu_formats_out (one entry per input / output, 0 plain), which the kernels read.
#include <algorithm>
#include <set>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

constexpr char kConvTactic[] = "convolution_onednn_direct";
constexpr char kPoolTactic[] = "pooling_onednn_direct";

bool isFormatAware(ir::Node const& n) {
  if (n.tactic == kConvTactic) return n.op == ir::OpType::kConvolution;
  if (n.tactic == kPoolTactic) return n.op == ir::OpType::kPooling;
  return false;
}

// Input slots of a format-aware node that may take a non-plain activation.
bool formatSlot(ir::Node const& n, size_t i) { return i == 0 || (n.op == ir::OpType::kConvolution && i == 3); }

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
    // A pooling reads and writes one format: where only one side could change, neither does.
    for (bool again = true; again;) {
      again = false;
      for (auto const& n : g.nodes()) {
        if (!isFormatAware(*n) || n->op != ir::OpType::kPooling || n->inputs.empty() || n->outputs.empty()) continue;
        ir::Value const* x = n->inputs[0];
        ir::Value const* y = n->outputs[0];
        if (chosen.count(x) != chosen.count(y)) {
          chosen.erase(x);
          chosen.erase(y);
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
  // such layers, float32 [N, C, H, W] with C known and divisible by the block, never a network input or output.
  static bool eligible(ir::Graph const& g, ir::Value const& v, int64_t block) {
    if (v.isInput || v.isOutput || !v.producer || !isFormatAware(*v.producer)) return false;
    if (v.producer->outputs.empty() || v.producer->outputs[0] != &v) return false;
    if (v.dtype != DataType::kFLOAT || v.shape.nbDims != 4 || v.shape.d[1] <= 0 || v.shape.d[1] % block != 0)
      return false;
    std::vector<ir::Node*> users = g.users(&v);
    if (users.empty()) return false;
    for (ir::Node const* u : users) {
      if (!isFormatAware(*u) || u->inputs.empty() || u->inputs[0] == nullptr || u->inputs[0]->shape.nbDims != 4)
        return false;
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
