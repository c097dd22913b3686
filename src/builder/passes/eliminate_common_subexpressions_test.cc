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

}  // namespace
}  // namespace kiln::builder
