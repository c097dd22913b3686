// Constant folding: a node whose inputs are all constants is computed once at build time (with the
// context's host evaluator) and becomes a Constant; Shape of a statically shaped tensor becomes a Constant.
#include <algorithm>

#include "builder/passes/pass.h"

namespace kiln::builder {
namespace {

// Folding must not turn small weights into huge ones (e.g. an Expand-like broadcast of a scalar).
constexpr int64_t kBlowUpFactor = 4;
constexpr int64_t kBlowUpElements = int64_t{1} << 20;

class FoldConstants final : public Pass {
 public:
  char const* name() const override { return "fold_constants"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    KILN_ASSIGN_OR_RETURN(std::vector<ir::Node*> order, g.topoOrder());
    bool changed = false;
    for (ir::Node* n : order) {
      if (n->op == ir::OpType::kConstant || n->outputs.size() != 1) continue;
      // Control flow (If/Loop) is left to run time: a loop may run long, and its subgraphs must not survive
      // on a Constant.
      if (!n->subgraphs.empty()) continue;
      // Plugins run only inside engines (their host execution may not even exist).
      if (n->op == ir::OpType::kPluginV2 || n->op == ir::OpType::kPluginV3) continue;
      ir::Value* out = n->outputs[0];
      if (n->op == ir::OpType::kShape) {
        ir::Value const* x = n->input(0);
        if (!x || !dimsKnown(x->shape)) continue;  // dynamic shapes are only known at run time
        HostTensor t = HostTensor::fromVector(DataType::kINT64, makeDims({x->shape.nbDims}), dimsToVector(x->shape));
        if (!t.data() && x->shape.nbDims > 0)
          return errorStatus(StatusCode::kOutOfMemory, n->describe(), ": no memory for the folded shape");
        toConstant(*n, std::move(t));
        passutil::log(ctx, strCat(name(), ": folded ", n->describe()));
        changed = true;
        continue;
      }
      if (!ctx.evaluator || n->inputs.empty() || !dimsKnown(out->shape)) continue;
      bool allConstant = true;
      int64_t largestInput = 0;
      std::vector<HostTensor const*> in;
      for (ir::Value const* v : n->inputs) {
        if (!v) {
          in.push_back(nullptr);
          continue;
        }
        HostTensor const* c = passutil::constantData(v);
        if (!c) {
          allConstant = false;
          break;
        }
        largestInput = std::max(largestInput, c->count());
        in.push_back(c);
      }
      if (!allConstant) continue;
      int64_t outElems = volume(out->shape);
      if (outElems > kBlowUpElements && outElems > kBlowUpFactor * largestInput) continue;
      std::vector<HostTensor> result;
      KILN_ASSIGN_OR_RETURN(HostTensor t, HostTensor::allocate(out->dtype, out->shape, "folded constant", ctx.budget));
      result.push_back(std::move(t));
      Status st = (*ctx.evaluator)(*n, in, result);
      if (!st.isOk()) {
        // No kernel for this combination: leave the node for the backends rather than fail the build.
        if (st.code() == StatusCode::kUnsupported) continue;
        return st.withContext(n->describe());
      }
      toConstant(*n, std::move(result[0]));
      passutil::log(ctx, strCat(name(), ": folded ", n->describe()));
      changed = true;
    }
    return changed;
  }

 private:
  // Turns the node into a Constant in place: its output keeps its name, users and graph-output mark.
  static void toConstant(ir::Node& n, HostTensor data) {
    n.op = ir::OpType::kConstant;
    n.inputs.clear();
    n.attrs = ir::Attributes();
    n.tactic.clear();
    n.outputs[0]->dtype = data.dtype();
    n.outputs[0]->shape = data.shape();
    n.constant = std::move(data);
  }
};

}  // namespace

std::unique_ptr<Pass> createFoldConstantsPass() { return std::make_unique<FoldConstants>(); }

}  // namespace kiln::builder
