// Tests of dim origins: which unknown dims passes may treat as equal.
#include "builder/passes/dim_origin.h"

#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

ir::Value const* named(ir::Graph const& g, char const* name) {
  for (auto const& v : g.values())
    if (v->name == name) return v.get();
  ADD_FAILURE() << "no value " << name;
  return g.values().front().get();
}

TEST(DimOrigin, FollowsCopiesOfADimAndStopsAtBroadcasts) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[-1,4,8]\n"
      "  input z: f32[-1,4,8]\n"
      "  a: f32[-1,4,8] = Activation \"act\" (x) {type=0}\n"
      "  w: f32[8,8] = Constant \"w\" () {data=random(1)}\n"
      "  m: f32[-1,4,8] = MatrixMultiply \"fc\" (a, w) {op_a=0, op_b=0}\n"
      "  c: f32[1,1,8] = Constant \"c\" () {data=random(2)}\n"
      "  b: f32[-1,4,8] = ElementWise \"bias\" (m, c) {op=0}\n"
      "  v: f32[-1,4,2,4] = Shuffle \"split\" (b) {reshape=[0,4,2,4]}\n"
      "  t: f32[4,-1,2,4] = Shuffle \"swap\" (v) {second_perm=[1,0,2,3]}\n"
      "  e: f32[-1,4,8] = ElementWise \"sum\" (x, z) {op=0}\n"
      "  output t\n"
      "  output e\n"
      "}\n");
  ASSERT_TRUE(g);
  ir::Value const* x = named(*g, "x");
  EXPECT_EQ(passutil::dimOrigin(named(*g, "t"), 1), std::make_pair(x, 0));
  EXPECT_EQ(passutil::dimOrigin(named(*g, "b"), 0), std::make_pair(x, 0));
  EXPECT_TRUE(passutil::sameDim(named(*g, "t"), 1, named(*g, "a"), 0));
  EXPECT_TRUE(passutil::sameShape(named(*g, "b"), x));
  // Another input's -1, and a sum of two computed tensors (which may broadcast): not provably x's batch.
  EXPECT_FALSE(passutil::sameShape(named(*g, "z"), x));
  EXPECT_FALSE(passutil::sameShape(named(*g, "e"), x));
  // Known dims compare as numbers; out-of-range axes are never equal.
  EXPECT_TRUE(passutil::sameDim(named(*g, "t"), 0, x, 1));
  EXPECT_FALSE(passutil::sameDim(named(*g, "t"), 2, x, 1));
  EXPECT_FALSE(passutil::sameDim(x, 3, x, 3));
}

// Attention's products and a sum of two computed tensors: a batch dim of two operands is theirs when both have one
// origin (q k^T and p v of projections of one input), and unproven otherwise.
TEST(DimOrigin, BinaryLayersJoinOperandsOfOneOrigin) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[-1,4,8]\n"
      "  input z: f32[-1,4,8]\n"
      "  wq: f32[8,8] = Constant \"wq\" () {data=random(1)}\n"
      "  wk: f32[8,8] = Constant \"wk\" () {data=random(2)}\n"
      "  q: f32[-1,4,8] = MatrixMultiply \"q\" (x, wq) {op_a=0, op_b=0}\n"
      "  k: f32[-1,4,8] = MatrixMultiply \"k\" (x, wk) {op_a=0, op_b=0}\n"
      "  kz: f32[-1,4,8] = MatrixMultiply \"kz\" (z, wk) {op_a=0, op_b=0}\n"
      "  s: f32[-1,4,4] = MatrixMultiply \"qk\" (q, k) {op_a=0, op_b=1}\n"
      "  p: f32[-1,4,4] = SoftMax \"softmax\" (s) {axis=2}\n"
      "  c: f32[-1,4,8] = MatrixMultiply \"pv\" (p, q) {op_a=0, op_b=0}\n"
      "  sz: f32[-1,4,4] = MatrixMultiply \"qkz\" (q, kz) {op_a=0, op_b=1}\n"
      "  e: f32[-1,4,8] = ElementWise \"sum\" (q, k) {op=0}\n"
      "  output c\n"
      "  output sz\n"
      "  output e\n"
      "}\n");
  ASSERT_TRUE(g);
  ir::Value const* x = named(*g, "x");
  EXPECT_EQ(passutil::dimOrigin(named(*g, "c"), 0), std::make_pair(x, 0));
  EXPECT_EQ(passutil::dimOrigin(named(*g, "e"), 0), std::make_pair(x, 0));
  EXPECT_TRUE(passutil::sameShape(named(*g, "c"), x));
  // The rows of a product are its first operand's, whatever the second.
  EXPECT_TRUE(passutil::sameDim(named(*g, "sz"), 1, x, 1));
  // q's batch against z's: not provably one.
  EXPECT_FALSE(passutil::sameDim(named(*g, "sz"), 0, x, 0));
}

}  // namespace
}  // namespace kiln::builder
