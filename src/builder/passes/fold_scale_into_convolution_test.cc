// Tests of folding Scale (batch normalization) and per-channel ElementWise into convolution weights and bias.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

// Folding re-rounds the weights, so outputs agree within float32 rounding, not bit for bit.
constexpr double kFoldTolerance = 1e-5;

constexpr char kConvAttrs[] = "{groups=1, kernel_shape=[3,3], pads_begin=[1,1], pads_end=[1,1], strides=[1,1]}";

std::string convGraph(std::string const& tail, std::string const& output = "z", std::string const& bias = "b") {
  return std::string("graph {\n"
                     "  input x: f32[1,3,5,-1]\n"
                     "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
                     "  b: f32[4] = Constant \"b\" () {data=[0.1,0.2,-0.3,0.4]}\n"
                     "  y: f32[1,4,5,-1] = Convolution \"conv\" (x, w, ") +
         bias + ") " + kConvAttrs + "\n" + tail + "  output " + output + "\n}\n";
}

TEST(FoldScaleIntoConvolution, FoldsBatchNormScale) {
  auto pass = createFoldScaleIntoConvolutionPass();
  std::string const bn =
      "  sh: f32[4] = Constant \"shift\" () {data=[1.0,-1.0,0.5,0.0]}\n"
      "  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
      "  pw: f32[4] = Constant \"power\" () {data=[1.0,1.0,1.0,1.0]}\n"
      "  z: f32[1,4,5,-1] = Scale \"bn\" (y, sh, sc, pw) {channel_axis=1, mode=1}\n";
  auto g = expectRewrite(*pass, convGraph(bn),
                         "graph {\n"
                         "  input x: f32[1,3,5,-1]\n"
                         "  w: f32[4,3,3,3] = Constant \"w\" () {data=<f32 x 108>}\n"
                         "  b: f32[4] = Constant \"b\" () {data=[0.1,0.2,-0.3,0.4]}\n"
                         "  conv_folded_weights_output: f32[4,3,3,3] = Constant \"conv_folded_weights\" () "
                         "{data=<f32 x 108>}\n"
                         "  conv_folded_bias_output: f32[4] = Constant \"conv_folded_bias\" () "
                         "{data=[1.2,-0.9,0.8,1.2]}\n"
                         "  z: f32[1,4,5,-1] = Convolution \"conv\" (x, conv_folded_weights_output, "
                         "conv_folded_bias_output) " +
                             std::string(kConvAttrs) +
                             " @fused=[\"conv\",\"bn\"]\n"
                             "  sh: f32[4] = Constant \"shift\" () {data=[1.0,-1.0,0.5,0.0]}\n"
                             "  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
                             "  pw: f32[4] = Constant \"power\" () {data=[1.0,1.0,1.0,1.0]}\n"
                             "  output z\n"
                             "}\n",
                         kFoldTolerance);
  ASSERT_TRUE(g);
  // The weights of output channel 2 were multiplied by -1.
  HostTensor const& w = *g->findNode("w")->constant;
  HostTensor const& fw = *g->findNode("conv_folded_weights")->constant;
  for (int64_t i = 0; i < 27; ++i) EXPECT_EQ(fw.doubleAt(54 + i), -w.doubleAt(54 + i));
}

TEST(FoldScaleIntoConvolution, UniformScaleWithoutBiasCreatesOne) {
  auto pass = createFoldScaleIntoConvolutionPass();
  std::string const scale =
      "  sc: f32[1] = Constant \"scale\" () {data=[0.25]}\n"
      "  z: f32[1,4,5,-1] = Scale \"uniform\" (y, _, sc) {mode=0}\n";
  auto g = testing::parseInferred(convGraph(scale, "z", "_"));
  ASSERT_TRUE(g);
  auto before = g->clone();
  EXPECT_TRUE(testing::runPass(*pass, *g));
  ir::Node* conv = g->findNode("conv");
  ASSERT_TRUE(conv && conv->input(2));
  EXPECT_EQ(conv->outputs[0]->name, "z");
  EXPECT_EQ(conv->input(2)->producer->constant->toInt64Vector(), (std::vector<int64_t>{0, 0, 0, 0}));
  testing::expectSameOutputs(*before, *g, kFoldTolerance);
}

TEST(FoldScaleIntoConvolution, FoldsPerChannelProductAndSum) {
  auto pass = createFoldScaleIntoConvolutionPass();
  std::string const ew =
      "  m: f32[1,4,1,1] = Constant \"m\" () {data=[1.5,-2.0,0.5,4.0]}\n"
      "  p: f32[1,4,5,-1] = ElementWise \"mul\" (m, y) {op=1}\n"
      "  a: f32[4,1,1] = Constant \"a\" () {data=[0.5,0.25,-0.125,2.0]}\n"
      "  z: f32[1,4,5,-1] = ElementWise \"add\" (p, a) {op=0}\n";
  auto g = testing::parseInferred(convGraph(ew));
  ASSERT_TRUE(g);
  auto before = g->clone();
  EXPECT_TRUE(testing::runPass(*pass, *g));
  ir::Node* conv = g->findNode("conv");
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->outputs[0]->name, "z");
  EXPECT_EQ(conv->fusedFrom, (std::vector<std::string>{"conv", "mul", "add"}));
  EXPECT_EQ(g->findNode("mul"), nullptr);
  EXPECT_EQ(g->findNode("add"), nullptr);
  HostTensor const& bias = *conv->input(2)->producer->constant;
  double expected[] = {0.1 * 1.5 + 0.5, 0.2 * -2.0 + 0.25, -0.3 * 0.5 - 0.125, 0.4 * 4.0 + 2.0};
  for (int64_t i = 0; i < 4; ++i) EXPECT_NEAR(bias.doubleAt(i), expected[i], 1e-6);
  testing::expectSameOutputs(*before, *g, kFoldTolerance);
}

TEST(FoldScaleIntoConvolution, DoesNotFoldWhenTheConvOutputHasTwoUsers) {
  auto pass = createFoldScaleIntoConvolutionPass();
  expectNoRewrite(*pass, convGraph("  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
                                   "  z: f32[1,4,5,-1] = Scale \"bn\" (y, _, sc) {channel_axis=1, mode=1}\n"
                                   "  r: f32[1,4,5,-1] = Activation \"relu\" (y) {type=0}\n"
                                   "  output r\n"));
}

TEST(FoldScaleIntoConvolution, DoesNotFoldAcrossAGraphOutput) {
  auto pass = createFoldScaleIntoConvolutionPass();
  expectNoRewrite(*pass, convGraph("  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
                                   "  z: f32[1,4,5,-1] = Scale \"bn\" (y, _, sc) {channel_axis=1, mode=1}\n"
                                   "  output y\n"));
}

TEST(FoldScaleIntoConvolution, DoesNotFoldIntoComputedWeights) {
  auto pass = createFoldScaleIntoConvolutionPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[1,3,5,5]\n"
                  "  input w: f32[4,3,3,3]\n"
                  "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) " + std::string(kConvAttrs) + "\n"
                  "  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
                  "  z: f32[1,4,5,5] = Scale \"bn\" (y, _, sc) {channel_axis=1, mode=1}\n"
                  "  output z\n"
                  "}\n");
}

TEST(FoldScaleIntoConvolution, DoesNotFoldAfterAnActivation) {
  auto pass = createFoldScaleIntoConvolutionPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[1,3,5,5]\n"
                  "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
                  "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) {act_alpha=0.0, act_beta=0.0, activation=0, "
                  "groups=1, kernel_shape=[3,3], pads_begin=[1,1], pads_end=[1,1], strides=[1,1]}\n"
                  "  sc: f32[4] = Constant \"scale\" () {data=[2.0,0.5,-1.0,3.0]}\n"
                  "  z: f32[1,4,5,5] = Scale \"bn\" (y, _, sc) {channel_axis=1, mode=1}\n"
                  "  output z\n"
                  "}\n");
}

TEST(FoldScaleIntoConvolution, DoesNotFoldPowersOrNonChannelConstants) {
  auto pass = createFoldScaleIntoConvolutionPass();
  expectNoRewrite(*pass, convGraph("  pw: f32[4] = Constant \"power\" () {data=[1.0,2.0,1.0,1.0]}\n"
                                   "  z: f32[1,4,5,-1] = Scale \"bn\" (y, _, _, pw) {channel_axis=1, mode=1}\n"));
  expectNoRewrite(*pass, convGraph("  s: f32[1,1,5,1] = Constant \"rows\" () {data=[1.0,2.0,3.0,4.0,5.0]}\n"
                                   "  z: f32[1,4,5,-1] = ElementWise \"mul\" (y, s) {op=1}\n"));
  expectNoRewrite(*pass, convGraph("  s: f32[4,1,1] = Constant \"s\" () {data=[1.0,2.0,3.0,4.0]}\n"
                                   "  z: f32[1,4,5,-1] = ElementWise \"sub\" (y, s) {op=4}\n"));
}

}  // namespace
}  // namespace kiln::builder
