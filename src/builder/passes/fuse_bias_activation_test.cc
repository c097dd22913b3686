// Tests of bias, residual and activation fusion into Convolution and MatrixMultiply.
#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

using testing::expectNoRewrite;
using testing::expectRewrite;

constexpr char kAttrs[] = "groups=1, kernel_shape=[3,3], pads_begin=[1,1], pads_end=[1,1], strides=[1,1]";

std::string a(char const* s) { return s; }

TEST(FuseBiasActivation, ConvBiasAndRelu) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                a("graph {\n"
                  "  input x: f32[1,3,-1,-1]\n"
                  "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
                  "  y: f32[1,4,-1,-1] = Convolution \"conv\" (x, w) {") + kAttrs + "}\n"
                  "  c: f32[1,4,1,1] = Constant \"c\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                  "  s: f32[1,4,-1,-1] = ElementWise \"bias\" (y, c) {op=0}\n"
                  "  z: f32[1,4,-1,-1] = Activation \"relu\" (s) {type=0}\n"
                  "  output z\n"
                  "}\n",
                a("graph {\n"
                  "  input x: f32[1,3,-1,-1]\n"
                  "  w: f32[4,3,3,3] = Constant \"w\" () {data=<f32 x 108>}\n"
                  "  conv_bias_output: f32[4] = Constant \"conv_bias\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                  "  z: f32[1,4,-1,-1] = Convolution \"conv\" (x, w, conv_bias_output) {act_alpha=0.0, act_beta=0.0, "
                  "activation=0, ") + kAttrs + "} @fused=[\"conv\",\"bias\",\"relu\"]\n"
                  "  c: f32[1,4,1,1] = Constant \"c\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                  "  output z\n"
                  "}\n");
}

TEST(FuseBiasActivation, ConvBiasAddsToAnExistingBias) {
  auto pass = createFuseBiasActivationPass();
  auto g = testing::parseInferred(
      a("graph {\n"
        "  input x: f32[2,3,4,4]\n"
        "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
        "  b: f32[4] = Constant \"b\" () {data=[1.0,2.0,3.0,4.0]}\n"
        "  y: f32[2,4,4,4] = Convolution \"conv\" (x, w, b) {") + kAttrs + "}\n"
        "  c: f32[1] = Constant \"c\" () {data=[0.5]}\n"
        "  z: f32[2,4,4,4] = ElementWise \"bias\" (c, y) {op=0}\n"
        "  output z\n"
        "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  EXPECT_TRUE(testing::runPass(*pass, *g));
  ir::Node* conv = g->findNode("conv");
  ASSERT_TRUE(conv);
  EXPECT_EQ(conv->input(2)->producer->constant->toInt64Vector(), (std::vector<int64_t>{1, 2, 3, 4}));  // truncated
  EXPECT_EQ(conv->input(2)->producer->constant->doubleAt(3), 4.5);
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FuseBiasActivation, MatMulBiasAndActivation) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[-1,2,3]\n"
                "  w: f32[3,4] = Constant \"w\" () {data=[1.0,2.0,3.0,4.0,-1.0,0.5,0.25,2.0,0.0,1.0,-3.0,1.5]}\n"
                "  y: f32[-1,2,4] = MatrixMultiply \"fc\" (x, w) {op_a=0, op_b=0}\n"
                "  c: f32[4] = Constant \"c\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                "  s: f32[-1,2,4] = ElementWise \"bias\" (y, c) {op=0}\n"
                "  z: f32[-1,2,4] = Activation \"leaky\" (s) {alpha=0.1, type=3}\n"
                "  output z\n"
                "}\n",
                "graph {\n"
                "  input x: f32[-1,2,3]\n"
                "  w: f32[3,4] = Constant \"w\" () {data=[1.0,2.0,3.0,4.0,-1.0,0.5,0.25,2.0,0.0,1.0,-3.0,1.5]}\n"
                "  c: f32[4] = Constant \"c\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                "  z: f32[-1,2,4] = MatrixMultiply \"fc\" (x, w, c) {act_alpha=0.1, act_beta=0.0, activation=3, "
                "op_a=0, op_b=0} @fused=[\"fc\",\"bias\",\"leaky\"]\n"
                "  output z\n"
                "}\n");
}

TEST(FuseBiasActivation, ConvResidualAndRelu) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                a("graph {\n"
                  "  input x: f32[1,4,-1,-1]\n"
                  "  w1: f32[4,4,3,3] = Constant \"w1\" () {data=random(1)}\n"
                  "  w2: f32[4,4,3,3] = Constant \"w2\" () {data=random(2)}\n"
                  "  r: f32[1,4,-1,-1] = Activation \"relu0\" (x) {type=0}\n"
                  "  y: f32[1,4,-1,-1] = Convolution \"conv\" (r, w1) {") + kAttrs + "}\n"
                  "  s: f32[1,4,-1,-1] = ElementWise \"add\" (y, r) {op=0}\n"
                  "  z: f32[1,4,-1,-1] = Activation \"relu\" (s) {type=0}\n"
                  "  output z\n"
                  "}\n",
                a("graph {\n"
                  "  input x: f32[1,4,-1,-1]\n"
                  "  w1: f32[4,4,3,3] = Constant \"w1\" () {data=<f32 x 144>}\n"
                  "  w2: f32[4,4,3,3] = Constant \"w2\" () {data=<f32 x 144>}\n"
                  "  r: f32[1,4,-1,-1] = Activation \"relu0\" (x) {type=0}\n"
                  "  z: f32[1,4,-1,-1] = Convolution \"conv\" (r, w1, _, r) {act_alpha=0.0, act_beta=0.0, "
                  "activation=0, ") + kAttrs + "} @fused=[\"conv\",\"add\",\"relu\"]\n"
                  "  output z\n"
                  "}\n");
}

// BERT's attention-output and FFN-out pattern: fc -> bias -> residual add of the layer's input; an activation
// after the residual fuses too (y = act(x w + c + x), as for Convolution).
TEST(FuseBiasActivation, MatMulBiasResidualAndActivation) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[2,3,3]\n"
                "  w: f32[3,3] = Constant \"w\" () {data=[1.0,2.0,3.0,4.0,-1.0,0.5,0.25,2.0,0.0]}\n"
                "  y: f32[2,3,3] = MatrixMultiply \"fc\" (x, w) {op_a=0, op_b=0}\n"
                "  c: f32[3] = Constant \"c\" () {data=[0.5,-0.25,1.0]}\n"
                "  s: f32[2,3,3] = ElementWise \"bias\" (y, c) {op=0}\n"
                "  t: f32[2,3,3] = ElementWise \"residual\" (x, s) {op=0}\n"
                "  z: f32[2,3,3] = Activation \"relu\" (t) {type=0}\n"
                "  output z\n"
                "}\n",
                "graph {\n"
                "  input x: f32[2,3,3]\n"
                "  w: f32[3,3] = Constant \"w\" () {data=[1.0,2.0,3.0,4.0,-1.0,0.5,0.25,2.0,0.0]}\n"
                "  c: f32[3] = Constant \"c\" () {data=[0.5,-0.25,1.0]}\n"
                "  z: f32[2,3,3] = MatrixMultiply \"fc\" (x, w, c, x) {act_alpha=0.0, act_beta=0.0, activation=0, "
                "op_a=0, op_b=0} @fused=[\"fc\",\"bias\",\"residual\",\"relu\"]\n"
                "  output z\n"
                "}\n");
}

// A residual without a bias, from a node computed before the matmul.
TEST(FuseBiasActivation, MatMulResidualWithoutBias) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[4,2]\n"
                "  input v: f32[2,5]\n"
                "  input u: f32[4,5]\n"
                "  r: f32[4,5] = Activation \"early\" (u) {type=1}\n"
                "  y: f32[4,5] = MatrixMultiply \"fc\" (x, v) {op_a=0, op_b=0}\n"
                "  s: f32[4,5] = ElementWise \"add\" (y, r) {op=0}\n"
                "  output s\n"
                "}\n",
                "graph {\n"
                "  input x: f32[4,2]\n"
                "  input v: f32[2,5]\n"
                "  input u: f32[4,5]\n"
                "  r: f32[4,5] = Activation \"early\" (u) {type=1}\n"
                "  s: f32[4,5] = MatrixMultiply \"fc\" (x, v, _, r) {op_a=0, op_b=0} @fused=[\"fc\",\"add\"]\n"
                "  output s\n"
                "}\n");
}

TEST(FuseBiasActivation, NoMatMulResidual) {
  auto pass = createFuseBiasActivationPass();
  // Computed after the matmul (in topological order).
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4,4]\n"
                  "  y: f32[4,4] = MatrixMultiply \"fc\" (x, x) {op_a=0, op_b=0}\n"
                  "  r: f32[4,4] = Activation \"late\" (x) {type=1}\n"
                  "  s: f32[4,4] = ElementWise \"add\" (y, r) {op=0}\n"
                  "  output s\n"
                  "}\n");
  // Broadcast to y's shape: not a residual (and not constant: not a bias).
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,4,4]\n"
                  "  input r: f32[4,4]\n"
                  "  y: f32[2,4,4] = MatrixMultiply \"fc\" (x, x) {op_a=0, op_b=0}\n"
                  "  s: f32[2,4,4] = ElementWise \"add\" (y, r) {op=0}\n"
                  "  output s\n"
                  "}\n");
  // After an activation the sum comes after it: not the matmul's y = act(a b + residual).
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4,4]\n"
                  "  input r: f32[4,4]\n"
                  "  y: f32[4,4] = MatrixMultiply \"fc\" (x, x) {act_alpha=0.0, act_beta=0.0, activation=0, op_a=0, "
                  "op_b=0}\n"
                  "  s: f32[4,4] = ElementWise \"add\" (y, r) {op=0}\n"
                  "  output s\n"
                  "}\n");
  // Another type.
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[4,4]\n"
                  "  input r: f16[4,4]\n"
                  "  y: f32[4,4] = MatrixMultiply \"fc\" (x, x) {op_a=0, op_b=0}\n"
                  "  c: f32[4,4] = Cast \"cast\" (r) {to=0}\n"
                  "  s: f32[4,4] = ElementWise \"add\" (y, c) {op=0}\n"
                  "  output s\n"
                  "}\n");
}

// Attention's products stay plain for fuse_attention: q k^T + a computed mask before a SoftMax, and p v.
TEST(FuseBiasActivation, NoMatMulResidualInAttention) {
  auto pass = createFuseBiasActivationPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input q: f32[2,4,8]\n"
                  "  input k: f32[2,8,4]\n"
                  "  input m: f32[2,4,4]\n"
                  "  s: f32[2,4,4] = MatrixMultiply \"qk\" (q, k) {op_a=0, op_b=0}\n"
                  "  t: f32[2,4,4] = ElementWise \"mask\" (s, m) {op=0}\n"
                  "  p: f32[2,4,4] = SoftMax \"softmax\" (t) {axis=2}\n"
                  "  output p\n"
                  "}\n");
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input s: f32[2,4,4]\n"
                  "  input v: f32[2,4,4]\n"
                  "  p: f32[2,4,4] = SoftMax \"softmax\" (s) {axis=2}\n"
                  "  o: f32[2,4,4] = MatrixMultiply \"pv\" (p, v) {op_a=0, op_b=0}\n"
                  "  t: f32[2,4,4] = ElementWise \"add\" (o, v) {op=0}\n"
                  "  output t\n"
                  "}\n");
}

TEST(FuseBiasActivation, NoResidualFromATensorComputedAfterTheConv) {
  auto pass = createFuseBiasActivationPass();
  expectNoRewrite(*pass, a("graph {\n"
                           "  input x: f32[1,4,5,5]\n"
                           "  w: f32[4,4,3,3] = Constant \"w\" () {data=random(1)}\n"
                           "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) {") + kAttrs + "}\n"
                           "  r: f32[1,4,5,5] = Activation \"late\" (x) {type=1}\n"
                           "  s: f32[1,4,5,5] = ElementWise \"add\" (y, r) {op=0}\n"
                           "  output s\n"
                           "}\n");
}

TEST(FuseBiasActivation, NoResidualOfAnotherShape) {
  auto pass = createFuseBiasActivationPass();
  expectNoRewrite(*pass, a("graph {\n"
                           "  input x: f32[1,4,5,5]\n"
                           "  input r: f32[1,4,1,5]\n"
                           "  w: f32[4,4,3,3] = Constant \"w\" () {data=random(1)}\n"
                           "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) {") + kAttrs + "}\n"
                           "  s: f32[1,4,5,5] = ElementWise \"add\" (y, r) {op=0}\n"
                           "  output s\n"
                           "}\n");
}

// Two unknown batch dims of independent inputs may be 1 and 4 at run time, which the sum broadcasts and a fused
// residual would not: no fusion, and the graph still runs with 1 against 4.
TEST(FuseBiasActivation, NoResidualWhoseUnknownDimsHaveOtherOrigins) {
  auto pass = createFuseBiasActivationPass();
  constexpr char kNet[] =
      "graph {\n"
      "  input x: f32[-1,8]\n"
      "  input r: f32[-1,8]\n"
      "  w: f32[8,8] = Constant \"w\" () {data=random(1)}\n"
      "  y: f32[-1,8] = MatrixMultiply \"fc\" (x, w) {op_a=0, op_b=0}\n"
      "  s: f32[-1,8] = ElementWise \"add\" (y, r) {op=0}\n"
      "  output s\n"
      "}\n";
  expectNoRewrite(*pass, kNet);
  auto g = testing::parseInferred(kNet);
  ASSERT_TRUE(g);
  EXPECT_FALSE(testing::runPass(*pass, *g));
  auto x = ir::makeRandomTensor(DataType::kFLOAT, makeDims({1, 8}), 7);
  auto r = ir::makeRandomTensor(DataType::kFLOAT, makeDims({4, 8}), 8);
  ASSERT_TRUE(x.isOk() && r.isOk());
  auto out = backends::runGraphOnHost(*g, {*x, *r});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  ASSERT_EQ(out->size(), 1u);
  HostTensor const& s = (*out)[0];
  ASSERT_TRUE(dimsEqual(s.shape(), makeDims({4, 8}))) << dimsToString(s.shape());
  HostTensor const* w = passutil::constantData(g->outputs()[0]->producer->inputs[0]->producer->inputs[1]);
  ASSERT_TRUE(w);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 8; ++j) {
      double want = r->doubleAt(i * 8 + j);
      for (int64_t k = 0; k < 8; ++k) want += x->doubleAt(k) * w->doubleAt(k * 8 + j);
      EXPECT_NEAR(s.doubleAt(i * 8 + j), want, 1e-5) << i << "," << j;
    }
}

// BERT's residual: the unknown batch dims of the GEMM's output and of the residual are both copied from one input
// (through an Activation and the GEMM's rows), so they are equal whatever the batch: fused.
TEST(FuseBiasActivation, ResidualWhoseUnknownDimsHaveOneOrigin) {
  auto pass = createFuseBiasActivationPass();
  expectRewrite(*pass,
                "graph {\n"
                "  input x: f32[-1,8]\n"
                "  h: f32[-1,8] = Activation \"act\" (x) {type=1}\n"
                "  w: f32[8,8] = Constant \"w\" () {data=random(1)}\n"
                "  y: f32[-1,8] = MatrixMultiply \"fc\" (h, w) {op_a=0, op_b=0}\n"
                "  s: f32[-1,8] = ElementWise \"add\" (y, h) {op=0}\n"
                "  output s\n"
                "}\n",
                "graph {\n"
                "  input x: f32[-1,8]\n"
                "  h: f32[-1,8] = Activation \"act\" (x) {type=1}\n"
                "  w: f32[8,8] = Constant \"w\" () {data=<f32 x 64>}\n"
                "  s: f32[-1,8] = MatrixMultiply \"fc\" (h, w, _, h) {op_a=0, op_b=0} @fused=[\"fc\",\"add\"]\n"
                "  output s\n"
                "}\n");
}

TEST(FuseBiasActivation, NoSecondActivation) {
  auto pass = createFuseBiasActivationPass();
  expectNoRewrite(*pass, a("graph {\n"
                           "  input x: f32[1,4,5,5]\n"
                           "  w: f32[4,4,3,3] = Constant \"w\" () {data=random(1)}\n"
                           "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) {act_alpha=0.0, act_beta=0.0, "
                           "activation=0, ") + kAttrs + "}\n"
                           "  z: f32[1,4,5,5] = Activation \"sigmoid\" (y) {type=1}\n"
                           "  c: f32[4,1,1] = Constant \"c\" () {data=[0.5,-0.25,1.0,2.0]}\n"
                           "  s: f32[1,4,5,5] = ElementWise \"bias\" (z, c) {op=0}\n"
                           "  output s\n"
                           "}\n");
}

TEST(FuseBiasActivation, NoFusionThroughASharedOrOutputTensor) {
  auto pass = createFuseBiasActivationPass();
  std::string const head = a("graph {\n"
                             "  input x: f32[1,4,5,5]\n"
                             "  w: f32[4,4,3,3] = Constant \"w\" () {data=random(1)}\n"
                             "  y: f32[1,4,5,5] = Convolution \"conv\" (x, w) {") + kAttrs + "}\n"
                             "  z: f32[1,4,5,5] = Activation \"relu\" (y) {type=0}\n";
  expectNoRewrite(*pass, head + "  q: f32[1,4,5,5] = Activation \"sigmoid\" (y) {type=1}\n  output z\n  output q\n}\n");
  expectNoRewrite(*pass, head + "  output y\n  output z\n}\n");
}

TEST(FuseBiasActivation, NoMatMulBiasAlongAnotherDim) {
  auto pass = createFuseBiasActivationPass();
  expectNoRewrite(*pass,
                  "graph {\n"
                  "  input x: f32[2,3]\n"
                  "  w: f32[3,4] = Constant \"w\" () {data=[1.0,2.0,3.0,4.0,-1.0,0.5,0.25,2.0,0.0,1.0,-3.0,1.5]}\n"
                  "  y: f32[2,4] = MatrixMultiply \"fc\" (x, w) {op_a=0, op_b=0}\n"
                  "  c: f32[2,1] = Constant \"c\" () {data=[0.5,-0.25]}\n"
                  "  s: f32[2,4] = ElementWise \"bias\" (y, c) {op=0}\n"
                  "  output s\n"
                  "}\n");
}

}  // namespace
}  // namespace kiln::builder
