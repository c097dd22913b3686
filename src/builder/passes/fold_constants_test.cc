// Tests of constant folding.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

TEST(FoldConstants, FoldsChainsOfConstantLayersAndStaticShapes) {
  auto pass = createFoldConstantsPass();
  auto g = expectRewrite(*pass,
                         "graph {\n"
                         "  input x: f32[2,3]\n"
                         "  a: f32[3] = Constant \"a\" () {data=[1.0,-2.0,3.0]}\n"
                         "  b: f32[1] = Constant \"b\" () {data=[0.5]}\n"
                         "  s: f32[3] = ElementWise \"sum\" (a, b) {op=0}\n"
                         "  r: f32[3] = Activation \"relu\" (s) {type=0}\n"
                         "  y: f32[2,3] = ElementWise \"mul\" (x, r) {op=1}\n"
                         "  sh: i64[2] = Shape \"shape\" (x)\n"
                         "  output y\n"
                         "  output sh\n"
                         "}\n",
                         "graph {\n"
                         "  input x: f32[2,3]\n"
                         "  a: f32[3] = Constant \"a\" () {data=[1.0,-2.0,3.0]}\n"
                         "  b: f32[1] = Constant \"b\" () {data=[0.5]}\n"
                         "  s: f32[3] = Constant \"sum\" () {data=[1.5,-1.5,3.5]}\n"
                         "  r: f32[3] = Constant \"relu\" () {data=[1.5,0.0,3.5]}\n"
                         "  y: f32[2,3] = ElementWise \"mul\" (x, r) {op=1}\n"
                         "  sh: i64[2] = Constant \"shape\" () {data=[2,3]}\n"
                         "  output y\n"
                         "  output sh\n"
                         "}\n");
  ASSERT_TRUE(g);
  // The folded constants read back from the text exactly.
  ir::PrintOptions full;
  full.fullConstants = true;
  auto again = ir::parseGraph(ir::printGraph(*g, full));
  ASSERT_TRUE(again.isOk());
  EXPECT_EQ(ir::printGraph(**again, full), ir::printGraph(*g, full));
}

TEST(FoldConstants, FoldsAConstantGraphOutput) {
  auto pass = createFoldConstantsPass();
  expectRewrite(*pass,
                "graph {\n"
                "  a: i32[2] = Constant \"a\" () {data=[7,-3]}\n"
                "  y: i32[2] = ElementWise \"double\" (a, a) {op=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  a: i32[2] = Constant \"a\" () {data=[7,-3]}\n"
                "  y: i32[2] = Constant \"double\" () {data=[14,-6]}\n"
                "  output y\n"
                "}\n",
                -1);
}

TEST(FoldConstants, LeavesShapeOfADynamicTensor) {
  auto pass = createFoldConstantsPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[-1,3]\n"
                  "  sh: i64[2] = Shape \"shape\" (x)\n"
                  "  output sh\n"
                  "}\n");
}

TEST(FoldConstants, LeavesLayersWithAComputedInput) {
  auto pass = createFoldConstantsPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[3]\n"
                  "  a: f32[3] = Constant \"a\" () {data=[1.0,2.0,3.0]}\n"
                  "  y: f32[3] = ElementWise \"sum\" (a, x) {op=0}\n"
                  "  output y\n"
                  "}\n");
}

TEST(FoldConstants, DoesNotBlowUpWeights) {
  auto pass = createFoldConstantsPass();
  // [1024,1] + [1,2048] would make 2M elements out of 2K: left for run time.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  a: f32[1024,1] = Constant \"a\" () {data=random(1)}\n"
                  "  b: f32[1,2048] = Constant \"b\" () {data=random(2)}\n"
                  "  y: f32[1024,2048] = ElementWise \"outer_sum\" (a, b) {op=0}\n"
                  "  output y\n"
                  "}\n");
  // A large result that is not much larger than its inputs folds.
  expectRewrite(*pass,
                "graph {\n"
                "  a: f32[1100,1000] = Constant \"a\" () {data=fill(2.0)}\n"
                "  b: f32[1] = Constant \"b\" () {data=[0.5]}\n"
                "  y: f32[1100,1000] = ElementWise \"sum\" (a, b) {op=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  a: f32[1100,1000] = Constant \"a\" () {data=<f32 x 1100000>}\n"
                "  b: f32[1] = Constant \"b\" () {data=[0.5]}\n"
                "  y: f32[1100,1000] = Constant \"sum\" () {data=<f32 x 1100000>}\n"
                "  output y\n"
                "}\n",
                -1);
}

TEST(FoldConstants, WithoutAnEvaluatorOnlyShapesFold) {
  auto pass = createFoldConstantsPass();
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[4]\n"
      "  a: f32[1] = Constant \"a\" () {data=[1.0]}\n"
      "  s: f32[1] = Activation \"relu\" (a) {type=0}\n"
      "  sh: i64[1] = Shape \"shape\" (x)\n"
      "  output s\n"
      "  output sh\n"
      "}\n");
  ASSERT_TRUE(g);
  PassContext ctx;  // no evaluator
  auto r = pass->run(*g, ctx);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  EXPECT_TRUE(*r);
  EXPECT_EQ(g->findNode("relu")->op, ir::OpType::kActivation);
  EXPECT_EQ(g->findNode("shape")->op, ir::OpType::kConstant);
}

}  // namespace
}  // namespace kiln::builder
