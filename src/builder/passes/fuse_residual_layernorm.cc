// Residual add + normalization fusion: an ElementWise kSUM of two tensors of one type, one of the sum's shape and
// the other of it or broadcast over leading dims, read only by a Normalization as its x, becomes that
// Normalization's residual input (the kernels add it while loading x), so the sum is never written: BERT's
// embeddings Add (+ position embeddings [1, S, H]) -> LayerNorm and residual adds no GEMM absorbed.
#include "backends/normalization_view.h"
#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

bool isNormFloat(DataType t) { return t == DataType::kFLOAT || t == DataType::kHALF || t == DataType::kBF16; }

class FuseResidualLayerNorm final : public Pass {
 public:
  char const* name() const override { return "fuse_residual_layernorm"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
    std::vector<ir::Node*> fused;
    for (ir::Node* add : order) {
      if (add->op != ir::OpType::kElementWise || add->outputs.size() != 1 ||
          add->attrs.getInt("op", -1) != static_cast<int64_t>(ElementWiseOperation::kSUM))
        continue;
      ir::Value* a = add->input(0);
      ir::Value* b = add->input(1);
      ir::Value* s = add->output(0);
      if (!a || !b || add->inputs.size() != 2 || s->requestedType || !isNormFloat(s->dtype)) continue;
      // Fully known dims only: a dynamic dim on both sides may still broadcast at run time.
      if (a->dtype != s->dtype || b->dtype != s->dtype || !dimsKnown(s->shape)) continue;
      // x takes the sum's shape; the residual has it too, or it with leading dims 1.
      if (!dimsEqual(a->shape, s->shape)) std::swap(a, b);
      if (!dimsEqual(a->shape, s->shape) || !backends::residualFits(b->shape, s->shape)) continue;
      // Only when the sum has no other reader (ViT's pre-LN residual stream reads it again: left alone).
      ir::Node* norm = passutil::singleUser(g, s);
      if (!norm || norm->op != ir::OpType::kNormalization || norm->input(0) != s) continue;
      if (norm->inputs.size() > 3 && norm->inputs[3]) continue;  // already holds a residual
      if (norm->precision != add->precision) continue;           // the user asked for the add in another precision
      norm->inputs.resize(4, nullptr);
      norm->inputs[0] = a;
      norm->inputs[3] = b;
      passutil::recordFusion(*norm, *add);
      passutil::log(ctx, strCat(name(), ": ", add->describe(), " becomes the residual input of ", norm->describe()));
      fused.push_back(add);
    }
    for (ir::Node* n : fused) g.removeNode(n);
    if (!fused.empty()) g.removeUnusedValues();
    return !fused.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> createFuseResidualLayerNormPass() { return std::make_unique<FuseResidualLayerNorm>(); }

}  // namespace kiln::builder
