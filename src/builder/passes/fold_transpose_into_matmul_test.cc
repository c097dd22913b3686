// Tests of transpose folding into MatrixMultiply: attention's K^T, a plain 2-D transpose (the Shuffle goes), an
// operand already transposed, a reshape followed by the permutation; near misses stay. Outputs are compared with
// the graph before the pass on random inputs.
#include "builder/passes/pass_test_util.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

ir::Node const* only(ir::Graph const& g, ir::OpType op) {
  ir::Node const* r = nullptr;
  for (auto const& n : g.nodes())
    if (n->op == op) r = n.get();
  return r;
}

std::unique_ptr<ir::Graph> fold(std::string const& text, bool expectChange) {
  auto g = testing::parseInferred(text);
  EXPECT_TRUE(g);
  if (!g) return nullptr;
  auto before = g->clone();
  EXPECT_EQ(testing::runPass(*createFoldTransposeIntoMatmulPass(), *g), expectChange) << text;
  testing::expectSameOutputs(*before, *g, 1e-6);
  return g;
}

TEST(FoldTransposeIntoMatmul, AttentionKeyTranspose) {
  auto g = fold(
      "graph {\n"
      "  input q: f32[2,-1,4,8]\n"
      "  input k: f32[2,5,4,8]\n"
      "  a: f32[2,4,-1,8] = Shuffle \"tq\" (q) {first_perm=[0,2,1,3]}\n"
      "  b: f32[2,4,8,5] = Shuffle \"tk\" (k) {first_perm=[0,2,3,1]}\n"
      "  y: f32[2,4,-1,5] = MatrixMultiply \"scores\" (a, b) {op_a=0, op_b=0}\n"
      "  output y\n"
      "}\n",
      true);
  ASSERT_TRUE(g);
  ir::Node const* tk = g->findNode("tk");
  ASSERT_NE(tk, nullptr);
  EXPECT_EQ(tk->attrs.getInts("first_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  ir::Node const* mm = only(*g, ir::OpType::kMatrixMultiply);
  EXPECT_EQ(mm->attrs.getInt("op_a", -1), 0);  // tq keeps the last axis: left alone
  EXPECT_EQ(mm->attrs.getInt("op_b", -1), static_cast<int64_t>(MatrixOperation::kTRANSPOSE));
  EXPECT_EQ(g->findNode("tq")->attrs.getInts("first_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
}

TEST(FoldTransposeIntoMatmul, PlainTransposeGoesAndAFlagFlipsBack) {
  auto g = fold(
      "graph {\n"
      "  input x: f32[-1,4]\n"
      "  input w: f32[6,4]\n"
      "  t: f32[4,6] = Shuffle \"t\" (w) {first_perm=[1,0]}\n"
      "  y: f32[-1,6] = MatrixMultiply \"fc\" (x, t) {op_a=0, op_b=0}\n"
      "  output y\n"
      "}\n",
      true);
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 0);
  EXPECT_EQ(only(*g, ir::OpType::kMatrixMultiply)->attrs.getInt("op_b", -1), 1);
  // An operand already read transposed reads the Shuffle's input as it is.
  g = fold(
      "graph {\n"
      "  input x: f32[-1,3]\n"
      "  input w: f32[3,6]\n"
      "  t: f32[3,-1] = Shuffle \"t\" (x) {first_perm=[1,0]}\n"
      "  y: f32[-1,6] = MatrixMultiply \"fc\" (t, w) {op_a=1, op_b=0}\n"
      "  output y\n"
      "}\n",
      true);
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kShuffle), 0);
  EXPECT_EQ(only(*g, ir::OpType::kMatrixMultiply)->attrs.getInt("op_a", -1), 0);
}

TEST(FoldTransposeIntoMatmul, ReshapeThenPermutation) {
  auto g = fold(
      "graph {\n"
      "  input a: f32[2,4,-1,8]\n"
      "  input k: f32[2,3,32]\n"
      "  b: f32[2,4,8,3] = Shuffle \"tk\" (k) {reshape=[2,3,4,8], second_perm=[0,2,3,1]}\n"
      "  y: f32[2,4,-1,3] = MatrixMultiply \"scores\" (a, b) {op_a=0, op_b=0}\n"
      "  output y\n"
      "}\n",
      true);
  ASSERT_TRUE(g);
  ir::Node const* tk = g->findNode("tk");
  ASSERT_NE(tk, nullptr);
  EXPECT_EQ(tk->attrs.getInts("second_perm"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(tk->attrs.getInts("reshape"), (std::vector<int64_t>{2, 3, 4, 8}));
}

TEST(FoldTransposeIntoMatmul, NearMissesStay) {
  // The transposed value is also a graph output.
  fold(
      "graph {\n"
      "  input x: f32[3,4]\n"
      "  input w: f32[6,4]\n"
      "  t: f32[4,6] = Shuffle \"t\" (w) {first_perm=[1,0]}\n"
      "  y: f32[3,6] = MatrixMultiply \"fc\" (x, t) {op_a=0, op_b=0}\n"
      "  output y\n"
      "  output t\n"
      "}\n",
      false);
  // Read by two nodes.
  fold(
      "graph {\n"
      "  input x: f32[3,4]\n"
      "  input w: f32[6,4]\n"
      "  t: f32[4,6] = Shuffle \"t\" (w) {first_perm=[1,0]}\n"
      "  y: f32[3,6] = MatrixMultiply \"fc\" (x, t) {op_a=0, op_b=0}\n"
      "  z: f32[4,6] = Unary \"neg\" (t) {op=5}\n"
      "  output y\n"
      "  output z\n"
      "}\n",
      false);
  // The last axis stays where it is.
  fold(
      "graph {\n"
      "  input x: f32[2,3,4]\n"
      "  input w: f32[3,4,5]\n"
      "  t: f32[3,2,4] = Shuffle \"t\" (x) {first_perm=[1,0,2]}\n"
      "  y: f32[3,2,5] = MatrixMultiply \"bmm\" (t, w) {op_a=0, op_b=0}\n"
      "  output y\n"
      "}\n",
      false);
  // A vector operand.
  fold(
      "graph {\n"
      "  input x: f32[4,3]\n"
      "  input w: f32[3,4,5]\n"
      "  t: f32[3,4] = Shuffle \"t\" (x) {first_perm=[1,0]}\n"
      "  y: f32[3,5] = MatrixMultiply \"mv\" (t, w) {op_a=2, op_b=0}\n"
      "  output y\n"
      "}\n",
      false);
}

}  // namespace
}  // namespace kiln::builder
