// Tests of dead-layer elimination.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

TEST(EliminateDeadLayers, RemovesLayersThatReachNoOutput) {
  auto pass = createEliminateDeadLayersPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  input unused: f32[1]\n"
                "  c: f32[3] = Constant \"c\" () {data=[1.0,2.0,3.0]}\n"
                "  a: f32[2,3] = ElementWise \"add\" (x, c) {op=0}\n"
                "  d1: f32[2,3] = Activation \"dead_relu\" (a) {type=0}\n"
                "  d2: f32[2,3] = ElementWise \"dead_mul\" (d1, unused) {op=1}\n"
                "  k: f32[1] = Constant \"dead_const\" () {data=[5.0]}\n"
                "  y: f32[2,3] = Activation \"relu\" (a) {type=0}\n"
                "  output y\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2,3]\n"
                "  input unused: f32[1]\n"
                "  c: f32[3] = Constant \"c\" () {data=[1.0,2.0,3.0]}\n"
                "  a: f32[2,3] = ElementWise \"add\" (x, c) {op=0}\n"
                "  y: f32[2,3] = Activation \"relu\" (a) {type=0}\n"
                "  output y\n"
                "}\n");
}

TEST(EliminateDeadLayers, KeepsLayersWhoseOutputIsAGraphOutputInTheMiddle) {
  auto pass = createEliminateDeadLayersPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[-1,3]\n"
                  "  a: f32[-1,3] = Activation \"relu\" (x) {type=0}\n"
                  "  y: f32[-1,3] = Activation \"sigmoid\" (a) {type=1}\n"
                  "  k: f32[1] = Constant \"const_output\" () {data=[5.0]}\n"
                  "  output a\n"
                  "  output y\n"
                  "  output k\n"
                  "}\n");
}

TEST(EliminateDeadLayers, AGraphWithNoOutputsLosesEveryLayer) {
  auto pass = createEliminateDeadLayersPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2]\n"
                "  a: f32[2] = Activation \"relu\" (x) {type=0}\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2]\n"
                "}\n",
                -1);
}

}  // namespace
}  // namespace kiln::builder
