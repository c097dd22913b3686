// Tests of the optimization-level pipelines.
#include "builder/passes/pipeline.h"

#include "builder/passes/pass_test_util.h"

namespace kiln::builder {
namespace {

// conv -> BN (Scale) -> Identity -> relu, with a foldable constant branch and a dead layer.
constexpr char kNet[] =
    "graph {\n"
    "  input x: f32[1,3,-1,-1]\n"
    "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
    "  y: f32[1,4,-1,-1] = Convolution \"conv\" (x, w) {groups=1, kernel_shape=[3,3], pads_begin=[1,1], "
    "pads_end=[1,1], strides=[1,1]}\n"
    "  s0: f32[4] = Constant \"s0\" () {data=[1.0,2.0,0.5,-1.0]}\n"
    "  s1: f32[1] = Constant \"s1\" () {data=[2.0]}\n"
    "  sc: f32[4] = ElementWise \"scale_mul\" (s0, s1) {op=1}\n"
    "  sh: f32[4] = Constant \"sh\" () {data=[0.5,0.0,-0.5,1.0]}\n"
    "  bn: f32[1,4,-1,-1] = Scale \"bn\" (y, sh, sc) {channel_axis=1, mode=1}\n"
    "  i: f32[1,4,-1,-1] = Identity \"copy\" (bn)\n"
    "  z: f32[1,4,-1,-1] = Activation \"relu\" (i) {type=0}\n"
    "  d: f32[1,4,-1,-1] = Activation \"dead\" (z) {type=1}\n"
    "  output z\n"
    "}\n";

TEST(Pipeline, Level0FoldsConstantsAndRemovesDeadLayersOnly) {
  auto g = testing::parseInferred(kNet);
  ASSERT_TRUE(g);
  auto before = g->clone();
  std::vector<std::string> log;
  PassContext ctx;
  ctx.optimizationLevel = 0;
  ctx.evaluator = &testing::evaluator();
  ctx.log = &log;
  ASSERT_TRUE(runPipeline(*g, ctx).isOk());
  EXPECT_EQ(ir::printGraph(*g),
            "graph {\n"
            "  input x: f32[1,3,-1,-1]\n"
            "  w: f32[4,3,3,3] = Constant \"w\" () {data=<f32 x 108>}\n"
            "  y: f32[1,4,-1,-1] = Convolution \"conv\" (x, w) {groups=1, kernel_shape=[3,3], pads_begin=[1,1], "
            "pads_end=[1,1], strides=[1,1]}\n"
            "  sc: f32[4] = Constant \"scale_mul\" () {data=[2.0,4.0,1.0,-2.0]}\n"
            "  sh: f32[4] = Constant \"sh\" () {data=[0.5,0.0,-0.5,1.0]}\n"
            "  bn: f32[1,4,-1,-1] = Scale \"bn\" (y, sh, sc) {channel_axis=1, mode=1}\n"
            "  i: f32[1,4,-1,-1] = Identity \"copy\" (bn)\n"
            "  z: f32[1,4,-1,-1] = Activation \"relu\" (i) {type=0}\n"
            "  output z\n"
            "}\n");
  EXPECT_FALSE(log.empty());
  testing::expectSameOutputs(*before, *g, 1e-6);
}

TEST(Pipeline, Level3FusesEverythingIntoOneConvolution) {
  auto g = testing::parseInferred(kNet);
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  ASSERT_TRUE(runPipeline(*g, ctx).isOk());
  EXPECT_EQ(ir::printGraph(*g),
            "graph {\n"
            "  input x: f32[1,3,-1,-1]\n"
            "  conv_folded_weights_output: f32[4,3,3,3] = Constant \"conv_folded_weights\" () {data=<f32 x 108>}\n"
            "  conv_folded_bias_output: f32[4] = Constant \"conv_folded_bias\" () {data=[0.5,0.0,-0.5,1.0]}\n"
            "  z: f32[1,4,-1,-1] = Convolution \"conv\" (x, conv_folded_weights_output, conv_folded_bias_output) "
            "{act_alpha=0.0, act_beta=0.0, activation=0, groups=1, kernel_shape=[3,3], pads_begin=[1,1], "
            "pads_end=[1,1], strides=[1,1]} @fused=[\"conv\",\"bn\",\"relu\"]\n"
            "  output z\n"
            "}\n");
  testing::expectSameOutputs(*before, *g, 1e-5);
}

TEST(Pipeline, KeepsOutputNamesAndInputOutputCopies) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  input x: f32[3]\n"
      "  a: f32[3] = Identity \"id1\" (x)\n"
      "  b: f32[3] = Identity \"id2\" (a)\n"
      "  c: f32[3] = Activation \"relu\" (x) {type=0}\n"
      "  d: f32[3] = Identity \"id3\" (c)\n"
      "  output b\n"
      "  output d\n"
      "}\n");
  ASSERT_TRUE(g);
  auto before = g->clone();
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  ASSERT_TRUE(runPipeline(*g, ctx).isOk());
  EXPECT_EQ(ir::printGraph(*g),
            "graph {\n"
            "  input x: f32[3]\n"
            "  b: f32[3] = Identity \"id2\" (x)\n"
            "  d: f32[3] = Activation \"relu\" (x) {type=0}\n"
            "  output b\n"
            "  output d\n"
            "}\n");
  testing::expectSameOutputs(*before, *g, 0);
}

TEST(Pipeline, PassErrorsNameThePassAndTheLayer) {
  auto g = testing::parseInferred(
      "graph {\n"
      "  c: f32[2] = Constant \"c\" () {data=[1.0,-1.0]}\n"
      "  y: f32[2] = Activation \"bad_act\" (c) {type=0}\n"
      "  output y\n"
      "}\n");
  ASSERT_TRUE(g);
  g->findNode("bad_act")->attrs.setInt("type", 99);  // corrupted after inference: folding must report it
  PassContext ctx;
  ctx.evaluator = &testing::evaluator();
  Status st = runPipeline(*g, ctx);
  EXPECT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("fold_constants"), std::string::npos) << st.toString();
  EXPECT_NE(st.message().find("bad_act"), std::string::npos) << st.toString();
}

}  // namespace
}  // namespace kiln::builder
