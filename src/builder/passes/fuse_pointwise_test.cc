// Tests of pointwise fusion: which chains become one PointwiseFused node (same outputs as the layers, in fp32,
// fp16 and bf16 with broadcasts and casts inside), and what stops a group: values read outside it, graph outputs,
// non-pointwise ops, integer types, CPU targets and level 0.
#include "builder/passes/pass_test_util.h"
#include "ir/pointwise_program.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

ir::Node const* onlyFused(ir::Graph const& g) {
  ir::Node const* r = nullptr;
  for (auto const& n : g.nodes())
    if (n->op == ir::OpType::kPointwiseFused) {
      EXPECT_EQ(r, nullptr) << "more than one PointwiseFused";
      r = n.get();
    }
  return r;
}

TEST(FusePointwise, TwoLayersBecomeOneNodeWithAnImmediate) {
  auto pass = createFusePointwisePass();
  testing::expectRewrite(
      *pass,
      "graph {\n"
      "  input x: f32[2,3]\n"
      "  one: f32[1] = Constant \"one\" () {data=[1.5]}\n"
      "  a: f32[2,3] = ElementWise \"add\" (x, one) {op=0}\n"
      "  y: f32[2,3] = Activation \"relu\" (a) {type=0, alpha=0, beta=0}\n"
      "  output y\n"
      "}\n",
      "graph {\n"
      "  input x: f32[2,3]\n"
      "  one: f32[1] = Constant \"one\" () {data=[1.5]}\n"
      "  y: f32[2,3] = PointwiseFused \"PWN(add, relu)\" (x) {program=[1,2,0,0,0,-2,-1,2,0,1,-1,-1], "
      "program_floats=[0.0,0.0,0.0,0.0,1.5], to=0} @fused=[\"add\",\"relu\"]\n"
      "  output y\n"
      "}\n");
}

TEST(FusePointwise, LongChainWithBroadcastsAndCastsEveryFloatType) {
  for (std::string t : {"f32", "f16", "bf16"}) {
    SCOPED_TRACE(t);
    std::string const text =
        "graph {\n"
        "  input x: " +
        t +
        "[2,3,5]\n"
        "  input b: " +
        t +
        "[3,1]\n"
        "  input c: f32[5]\n"
        "  k: f32[1] = Constant \"k\" () {data=[0.75]}\n"
        "  m: " +
        t +
        "[2,3,5] = ElementWise \"mul\" (x, b) {op=1}\n"
        "  f: f32[2,3,5] = Cast \"up\" (m) {to=0}\n"
        "  s: f32[2,3,5] = Activation \"sig\" (f) {type=1, alpha=0, beta=0}\n"
        "  a: f32[2,3,5] = ElementWise \"addc\" (s, c) {op=0}\n"
        "  p: f32[2,3,5] = ElementWise \"scale\" (a, k) {op=1}\n"
        "  g: f32[2,3,5] = ElementWise \"gt\" (p, k) {op=12}\n"
        "  n: f32[2,3,5] = Unary \"neg\" (p) {op=5}\n"
        "  q: f32[2,3,5] = Select \"sel\" (g, p, n) {}\n"
        "  y: bf16[2,3,5] = Cast \"down\" (q) {to=7}\n"
        "  output y\n"
        "}\n";
    auto g = testing::parseInferred(text);
    ASSERT_TRUE(g);
    auto before = g->clone();
    ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
    ASSERT_EQ(g->nodes().size(), 2u) << ir::printGraph(*g);  // the fused node and the constant k (dead layers go later)
    ir::Node const* f = onlyFused(*g);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->inputs.size(), 3u);
    EXPECT_EQ(f->fusedFrom.size(), 9u);
    EXPECT_EQ(f->name, "PWN(mul, up, sig, addc, scale, gt, neg, sel, down)");
    EXPECT_EQ(g->outputs()[0]->name, "y");
    // fp16/bf16 products are kept in fp32 inside the fused node (rounded only at Casts): the bf16 output agrees to
    // its own precision.
    testing::expectSameOutputs(*before, *g, 1e-2);
  }
}

TEST(FusePointwise, FusedValuesMatchExactlyInFp32) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[4,16]\n"
      "  input b: f32[16]\n"
      "  e: f32[4,16] = Unary \"exp\" (x) {op=0}\n"
      "  n: f32[4,16] = Unary \"neg\" (e) {op=5}\n"
      "  d: f32[4,16] = ElementWise \"div\" (n, b) {op=5}\n"
      "  y: f32[4,16] = Activation \"elu\" (d) {type=4, alpha=0.5, beta=0}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  ASSERT_NE(onlyFused(*g), nullptr);
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FusePointwise, DiamondFusesWithOneInput) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[3,7]\n"
      "  a: f32[3,7] = Unary \"exp\" (x) {op=0}\n"
      "  b: f32[3,7] = Unary \"neg\" (a) {op=5}\n"
      "  c: f32[3,7] = Unary \"abs\" (a) {op=4}\n"
      "  y: f32[3,7] = ElementWise \"add\" (b, c) {op=0}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  ASSERT_EQ(g->nodes().size(), 1u);
  EXPECT_EQ(g->nodes()[0]->inputs.size(), 1u);  // x, read by two instructions, is one input
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FusePointwise, ValueReadOutsideTheGroupEndsIt) {
  // a feeds the SoftMax too: exp + add fuse (a is their sink), relu + neg fuse after it, a stays a tensor.
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[2,8]\n"
      "  input b: f32[8]\n"
      "  e: f32[2,8] = Unary \"exp\" (x) {op=0}\n"
      "  a: f32[2,8] = ElementWise \"add\" (e, b) {op=0}\n"
      "  s: f32[2,8] = SoftMax \"sm\" (a) {axis=1}\n"
      "  r: f32[2,8] = Activation \"relu\" (a) {type=0, alpha=0, beta=0}\n"
      "  n: f32[2,8] = Unary \"neg\" (r) {op=5}\n"
      "  y: f32[2,8] = ElementWise \"join\" (n, s) {op=0}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kPointwiseFused), 2);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kSoftMax), 1);
  for (auto const& n : g->nodes()) {
    if (n->op == ir::OpType::kPointwiseFused) {
      EXPECT_TRUE(n->name == "PWN(exp, add)" || n->name == "PWN(relu, neg, join)") << n->name;
    }
  }
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FusePointwise, GraphOutputsAndNonPointwiseLayersStayTensors) {
  // a is a graph output: it ends its own group (exp, add); relu alone is not fused; the SoftMax splits the rest.
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[2,8]\n"
      "  e: f32[2,8] = Unary \"exp\" (x) {op=0}\n"
      "  a: f32[2,8] = ElementWise \"add\" (e, x) {op=0}\n"
      "  r: f32[2,8] = Activation \"relu\" (a) {type=0, alpha=0, beta=0}\n"
      "  s: f32[2,8] = SoftMax \"sm\" (r) {axis=1}\n"
      "  y: f32[2,8] = Unary \"abs\" (s) {op=4}\n"
      "  output a\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kPointwiseFused), 1);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kActivation), 1);
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kUnary), 1);
  EXPECT_EQ(g->outputs()[0]->name, "a");
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FusePointwise, ConstantThatSetsTheRankStaysAnInput) {
  // [4] + [1, 1] is [1, 4]: the constant cannot become an immediate without losing the leading dim.
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[4]\n"
      "  c: f32[1,1] = Constant \"c\" () {data=[0.5]}\n"
      "  a: f32[1,4] = ElementWise \"add\" (x, c) {op=0}\n"
      "  y: f32[1,4] = Unary \"exp\" (a) {op=0}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  ir::Node const* f = onlyFused(*g);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->inputs.size(), 2u);
  EXPECT_EQ(dimsToString(f->outputs[0]->shape), "[1,4]");
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(FusePointwise, LeakyReluSelectWithBoolInside) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f16[3,9]\n"
      "  z: f16[1] = Constant \"z\" () {data=[0]}\n"
      "  s: f16[1] = Constant \"s\" () {data=[0.1]}\n"
      "  c: bool[3,9] = ElementWise \"gt\" (x, z) {op=12}\n"
      "  m: f16[3,9] = ElementWise \"mul\" (x, s) {op=1}\n"
      "  y: f16[3,9] = Select \"sel\" (c, x, m) {}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  ASSERT_TRUE(testing::runPass(*createFusePointwisePass(), *g));
  ir::Node const* f = onlyFused(*g);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->inputs.size(), 1u);
  testing::expectSameOutputs(*before, *g, 1e-3);
}

TEST(FusePointwise, IntegersCpuTargetsAndLevelZeroAreLeftAlone) {
  auto pass = createFusePointwisePass();
  testing::expectNoRewrite(*pass,
                           "graph {\n"
                           "  input x: i32[4]\n"
                           "  a: i32[4] = ElementWise \"add\" (x, x) {op=0}\n"
                           "  y: i32[4] = ElementWise \"mul\" (a, x) {op=1}\n"
                           "  output y\n"
                           "}\n");
  std::string const chain =
      "graph {\n"
      "  input x: f32[4]\n"
      "  a: f32[4] = Unary \"exp\" (x) {op=0}\n"
      "  y: f32[4] = Unary \"neg\" (a) {op=5}\n"
      "  output y\n"
      "}\n";
  for (int variant = 0; variant < 2; ++variant) {
    auto g = testing::parseInferred(chain);
    ASSERT_TRUE(g);
    PassContext ctx;
    if (variant == 0)
      ctx.cpuTarget = true;
    else
      ctx.optimizationLevel = 0;
    EXPECT_FALSE(testing::runPass(*pass, *g, &ctx));
  }
  auto g = testing::parseInferred(chain);
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::runPass(*pass, *g));  // the GPU default
}

}  // namespace
}  // namespace kiln::builder
