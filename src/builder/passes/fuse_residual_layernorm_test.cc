// Tests of residual add + normalization fusion: the embeddings-style Add -> LayerNorm fuses (the sum becomes the
// residual input, the Add goes), numerically equal; a sum read elsewhere (pre-LN residual stream), a broadcasting
// add, another op, a norm that reads the sum as scale, and dynamic shapes stay as they are.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

TEST(FuseResidualLayerNorm, AddFeedingOnlyLayerNormFuses) {
  auto pass = createFuseResidualLayerNormPass();
  auto g =
      expectRewrite(*pass,
                    "graph {\n"
                    "  input x: f32[2,3,8]\n"
                    "  input r: f32[2,3,8]\n"
                    "  input sc: f32[8]\n"
                    "  input bi: f32[8]\n"
                    "  s: f32[2,3,8] = ElementWise \"add\" (x, r) {op=0}\n"
                    "  y: f32[2,3,8] = Normalization \"ln\" (s, sc, bi) {axes=[2], epsilon=0.001, num_groups=1}\n"
                    "  output y\n"
                    "}\n",
                    "graph {\n"
                    "  input x: f32[2,3,8]\n"
                    "  input r: f32[2,3,8]\n"
                    "  input sc: f32[8]\n"
                    "  input bi: f32[8]\n"
                    "  y: f32[2,3,8] = Normalization \"ln\" (x, sc, bi, r) {axes=[2], epsilon=0.001, num_groups=1} "
                    "@fused=[\"ln\",\"add\"]\n"
                    "  output y\n"
                    "}\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0);
}

TEST(FuseResidualLayerNorm, GroupNormAndHalfFuse) {
  auto pass = createFuseResidualLayerNormPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f16[2,4,3,3]\n"
                "  input r: f16[2,4,3,3]\n"
                "  input sc: f16[1,2,1,1]\n"
                "  input bi: f16[1,2,1,1]\n"
                "  s: f16[2,4,3,3] = ElementWise \"add\" (x, r) {op=0}\n"
                "  y: f16[2,4,3,3] = Normalization \"gn\" (s, sc, bi) {axes=[2,3], num_groups=2}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f16[2,4,3,3]\n"
                "  input r: f16[2,4,3,3]\n"
                "  input sc: f16[1,2,1,1]\n"
                "  input bi: f16[1,2,1,1]\n"
                "  y: f16[2,4,3,3] = Normalization \"gn\" (x, sc, bi, r) {axes=[2,3], num_groups=2} "
                "@fused=[\"gn\",\"add\"]\n"
                "  output y\n"
                "}\n",
                2e-3);
}

TEST(FuseResidualLayerNorm, OtherShapesStayApart) {
  auto pass = createFuseResidualLayerNormPass();
  // The sum is read again (ViT's pre-LN residual stream).
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4,8]\n"
                  "  input r: f32[4,8]\n"
                  "  input sc: f32[8]\n"
                  "  input bi: f32[8]\n"
                  "  s: f32[4,8] = ElementWise \"add\" (x, r) {op=0}\n"
                  "  y: f32[4,8] = Normalization \"ln\" (s, sc, bi) {axes=[1]}\n"
                  "  z: f32[4,8] = ElementWise \"again\" (s, y) {op=0}\n"
                  "  output z\n"
                  "}\n");
  // A broadcasting add, a product, the sum as the scale, a sum that is a graph output.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4,8]\n"
                  "  input r: f32[1,8]\n"
                  "  input sc: f32[8]\n"
                  "  input bi: f32[8]\n"
                  "  s: f32[4,8] = ElementWise \"add\" (x, r) {op=0}\n"
                  "  y: f32[4,8] = Normalization \"ln\" (s, sc, bi) {axes=[1]}\n"
                  "  p: f32[4,8] = ElementWise \"mul\" (x, x) {op=1}\n"
                  "  y2: f32[4,8] = Normalization \"ln2\" (p, sc, bi) {axes=[1]}\n"
                  "  t: f32[8] = ElementWise \"add_scale\" (sc, bi) {op=0}\n"
                  "  y3: f32[4,8] = Normalization \"ln3\" (x, t, bi) {axes=[1]}\n"
                  "  o: f32[4,8] = ElementWise \"add_out\" (x, x) {op=0}\n"
                  "  y4: f32[4,8] = Normalization \"ln4\" (o, sc, bi) {axes=[1]}\n"
                  "  output y\n"
                  "  output y2\n"
                  "  output y3\n"
                  "  output o\n"
                  "  output y4\n"
                  "}\n");
  // Dynamic dims: equal on paper, but either side may be 1 at run time.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[-1,8]\n"
                  "  input r: f32[-1,8]\n"
                  "  input sc: f32[8]\n"
                  "  input bi: f32[8]\n"
                  "  s: f32[-1,8] = ElementWise \"add\" (x, r) {op=0}\n"
                  "  y: f32[-1,8] = Normalization \"ln\" (s, sc, bi) {axes=[1]}\n"
                  "  output y\n"
                  "}\n");
}

// The residual input's shape and type are checked by shape inference.
TEST(FuseResidualLayerNorm, InferRefusesAMismatchedResidual) {
  for (char const* r : {"f32[4,7]", "f16[4,8]"}) {
    auto g = ir::parseGraph(strCat("graph {\n  input x: f32[4,8]\n  input r: ", r,
                                   "\n  input sc: f32[8]\n  input bi: f32[8]\n"
                                   "  y: f32[4,8] = Normalization \"ln\" (x, sc, bi, r) {axes=[1]}\n  output y\n}\n"));
    ASSERT_TRUE(g.isOk()) << g.status().toString();
    Status st = ir::inferGraphInPlace(**g, &testing::evaluator());
    EXPECT_FALSE(st.isOk()) << r;
    EXPECT_NE(st.toString().find("residual"), std::string::npos) << st.toString();
  }
}

}  // namespace
}  // namespace kiln::builder
