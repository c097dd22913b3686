// Transpose folding into MatrixMultiply: a Shuffle whose last permutation sends the input's last axis to the
// second-to-last place, read only by one operand of a MatrixMultiply, is the same Shuffle with its last two output
// axes swapped followed by a transposed operand. The swapped permutation keeps the last axis in place, which the
// backends move as whole rows (or is the identity, and the Shuffle goes), and the GEMM reads the operand transposed
// for free. Attention's K^T ([B, S, H, D] -> [B, H, D, S], perm 0,2,3,1) becomes 0,2,1,3 with op_b kTRANSPOSE.
#include <utility>

#include "builder/passes/pass.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

class FoldTransposeIntoMatmul final : public Pass {
 public:
  char const* name() const override { return "fold_transpose_into_matmul"; }

  Result<bool> run(ir::Graph& g, PassContext const& ctx) override {
    bool changed = false;
    std::vector<ir::Node*> matmuls;
    for (auto const& n : g.nodes())
      if (n->op == ir::OpType::kMatrixMultiply) matmuls.push_back(n.get());
    for (ir::Node* mm : matmuls)
      for (size_t i = 0; i < 2 && i < mm->inputs.size(); ++i) changed |= tryFold(g, mm, i, ctx);
    if (changed) g.removeUnusedValues();
    return changed;
  }

 private:
  bool tryFold(ir::Graph& g, ir::Node* mm, size_t index, PassContext const& ctx) {
    ir::Value* v = mm->inputs[index];
    ir::Node* sh = v ? v->producer : nullptr;
    // A static Shuffle (no reshape-dims input) read by this operand alone.
    if (!sh || sh->op != ir::OpType::kShuffle || sh->inputs.size() != 1 || !sh->inputs[0] ||
        sh->outputs.size() != 1 || !passutil::hasSingleUse(g, v))
      return false;
    char const* opName = index == 0 ? "op_a" : "op_b";
    int64_t op = mm->attrs.getInt(opName, static_cast<int64_t>(MatrixOperation::kNONE));
    if (op != static_cast<int64_t>(MatrixOperation::kNONE) && op != static_cast<int64_t>(MatrixOperation::kTRANSPOSE))
      return false;
    // The permutation applied last: the second one after a reshape, else the first (with no second).
    bool const hasReshape = sh->attrs.has("reshape");
    char const* permName = hasReshape ? "second_perm" : "first_perm";
    if (!hasReshape && !passutil::isIdentityPermutation(sh->attrs.getInts("second_perm"))) return false;
    std::vector<int64_t> p = sh->attrs.getInts(permName);
    auto const r = static_cast<int64_t>(p.size());
    if (r < 2 || r != v->shape.nbDims || p[static_cast<size_t>(r - 2)] != r - 1) return false;
    std::vector<int64_t> q = p;
    std::swap(q[static_cast<size_t>(r - 2)], q[static_cast<size_t>(r - 1)]);
    std::string const before = sh->describe();
    if (passutil::isIdentityPermutation(q) && !hasReshape) {
      mm->inputs[index] = sh->inputs[0];
      passutil::recordFusion(*mm, *sh);
      g.removeNode(sh);
    } else {
      sh->attrs.setInts(permName, passutil::isIdentityPermutation(q) ? std::vector<int64_t>{} : q);
    }
    bool const transposed = op == static_cast<int64_t>(MatrixOperation::kTRANSPOSE);
    mm->attrs.setInt(opName, static_cast<int64_t>(transposed ? MatrixOperation::kNONE : MatrixOperation::kTRANSPOSE));
    passutil::log(ctx, strCat(name(), ": the last-two-axes swap of ", before, " into operand ", index, " of ",
                              mm->describe()));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> createFoldTransposeIntoMatmulPass() { return std::make_unique<FoldTransposeIntoMatmul>(); }

}  // namespace kiln::builder
