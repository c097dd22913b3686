// Tests of common-subexpression elimination: repeated mask arithmetic merges (users move to the first copy),
// different attributes or inputs stay apart, graph outputs keep their producers, random fills are never merged.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

TEST(EliminateCommonSubexpressions, RepeatedArithmeticMerges) {
  auto pass = createEliminateCommonSubexpressionsPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  input m: f32[2,3]\n"
                "  a: f32[2,3] = ElementWise \"mask0\" (m, x) {op=1}\n"
                "  b: f32[2,3] = ElementWise \"mask1\" (m, x) {op=1}\n"
                "  ra: f32[2,3] = Activation \"relu0\" (a) {type=0}\n"
                "  rb: f32[2,3] = Activation \"relu1\" (b) {type=0}\n"
                "  y: f32[2,3] = ElementWise \"sum\" (ra, rb) {op=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  input m: f32[2,3]\n"
                "  a: f32[2,3] = ElementWise \"mask0\" (m, x) {op=1} @fused=[\"mask0\",\"mask1\"]\n"
                "  ra: f32[2,3] = Activation \"relu0\" (a) {type=0} @fused=[\"relu0\",\"relu1\"]\n"
                "  y: f32[2,3] = ElementWise \"sum\" (ra, ra) {op=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateCommonSubexpressions, DifferentAttributesOrInputsStayApart) {
  auto pass = createEliminateCommonSubexpressionsPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  input m: f32[2,3]\n"
                  "  a: f32[2,3] = ElementWise \"sub\" (m, x) {op=1}\n"
                  "  b: f32[2,3] = ElementWise \"mul\" (m, x) {op=2}\n"
                  "  c: f32[2,3] = ElementWise \"sub_swapped\" (x, m) {op=1}\n"
                  "  s: f32[2,3] = ElementWise \"s1\" (a, b) {op=0}\n"
                  "  y: f32[2,3] = ElementWise \"s2\" (s, c) {op=0}\n"
                  "  output y\n"
                  "}\n");
}

TEST(EliminateCommonSubexpressions, GraphOutputsAndRandomFillsStay) {
  auto pass = createEliminateCommonSubexpressionsPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  a: f32[2,3] = Activation \"relu0\" (x) {type=0}\n"
                  "  b: f32[2,3] = Activation \"relu1\" (x) {type=0}\n"
                  "  output a\n"
                  "  output b\n"
                  "}\n");
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  r1: f32[2,2] = Fill \"rand1\" () {op=1, dims=[2,2], alpha=0.0, beta=1.0}\n"
                  "  r2: f32[2,2] = Fill \"rand2\" () {op=1, dims=[2,2], alpha=0.0, beta=1.0}\n"
                  "  y: f32[2,2] = ElementWise \"sum\" (r1, r2) {op=0}\n"
                  "  output y\n"
                  "}\n");
}

// PyTorch's legacy exporter writes SDPA's boolean mask as Where(mask, 0, -inf) in every layer, each with constants
// of its own: equal small constants merge, so the Where (and a cast after it) are computed once.
TEST(EliminateCommonSubexpressions, PerLayerMaskConstantsMerge) {
  auto pass = createEliminateCommonSubexpressionsPass();
  auto g = expectRewrite(*pass,
                         "graph {\n"
                         "  input m: bool[2,1,1,4]\n"
                         "  input s0: f32[2,2,4,4]\n"
                         "  input s1: f32[2,2,4,4]\n"
                         "  z0: f32[1] = Constant \"zero0\" () {data=[0.0]}\n"
                         "  n0: f32[1] = Constant \"ninf0\" () {data=[-16.0]}\n"
                         "  w0: f32[2,1,1,4] = Select \"where0\" (m, z0, n0)\n"
                         "  c0: f16[2,1,1,4] = Cast \"cast0\" (w0) {to=1}\n"
                         "  z1: f32[1] = Constant \"zero1\" () {data=[0.0]}\n"
                         "  n1: f32[1] = Constant \"ninf1\" () {data=[-16.0]}\n"
                         "  w1: f32[2,1,1,4] = Select \"where1\" (m, z1, n1)\n"
                         "  c1: f16[2,1,1,4] = Cast \"cast1\" (w1) {to=1}\n"
                         "  a0: f16[2,2,4,4] = Cast \"up0\" (s0) {to=1}\n"
                         "  a1: f16[2,2,4,4] = Cast \"up1\" (s1) {to=1}\n"
                         "  y0: f16[2,2,4,4] = ElementWise \"add0\" (a0, c0) {op=0}\n"
                         "  y1: f16[2,2,4,4] = ElementWise \"add1\" (a1, c1) {op=0}\n"
                         "  output y0\n"
                         "  output y1\n"
                         "}\n",
                         "graph {\n"
                         "  input m: bool[2,1,1,4]\n"
                         "  input s0: f32[2,2,4,4]\n"
                         "  input s1: f32[2,2,4,4]\n"
                         "  z0: f32[1] = Constant \"zero0\" () {data=[0.0]}\n"
                         "  n0: f32[1] = Constant \"ninf0\" () {data=[-16.0]}\n"
                         "  w0: f32[2,1,1,4] = Select \"where0\" (m, z0, n0) @fused=[\"where0\",\"where1\"]\n"
                         "  c0: f16[2,1,1,4] = Cast \"cast0\" (w0) {to=1} @fused=[\"cast0\",\"cast1\"]\n"
                         "  a0: f16[2,2,4,4] = Cast \"up0\" (s0) {to=1}\n"
                         "  a1: f16[2,2,4,4] = Cast \"up1\" (s1) {to=1}\n"
                         "  y0: f16[2,2,4,4] = ElementWise \"add0\" (a0, c0) {op=0}\n"
                         "  y1: f16[2,2,4,4] = ElementWise \"add1\" (a1, c0) {op=0}\n"
                         "  output y0\n"
                         "  output y1\n"
                         "}\n");
  ASSERT_TRUE(g);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSelect), 1);
}

TEST(EliminateCommonSubexpressions, ConstantsThatDifferStayApart) {
  auto pass = createEliminateCommonSubexpressionsPass();
  // Different values, a different shape of the same bytes, a different type of the same value.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2]\n"
                  "  a: f32[2] = Constant \"a\" () {data=[1.0, 2.0]}\n"
                  "  b: f32[2] = Constant \"b\" () {data=[1.0, 3.0]}\n"
                  "  c: f32[1,2] = Constant \"c\" () {data=[1.0, 2.0]}\n"
                  "  d: i32[2] = Constant \"d\" () {data=[0, 0]}\n"
                  "  e: f32[2] = Constant \"e\" () {data=[0.0, 0.0]}\n"
                  "  ya: f32[2] = ElementWise \"ya\" (x, a) {op=0}\n"
                  "  yb: f32[2] = ElementWise \"yb\" (x, b) {op=0}\n"
                  "  yc: f32[1,2] = ElementWise \"yc\" (x, c) {op=0}\n"
                  "  ye: f32[2] = ElementWise \"ye\" (x, e) {op=0}\n"
                  "  output ya\n"
                  "  output yb\n"
                  "  output yc\n"
                  "  output d\n"
                  "  output ye\n"
                  "}\n");
}

}  // namespace
}  // namespace kiln::builder
