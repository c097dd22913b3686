// Tests of swish fusion into convolutions on CPU builds: fused (same outputs through the reference, either
// operand order), not on GPU builds, not when the sigmoid has other readers; nothing fuses after a swish.
#include "builder/passes/pass_test_util.h"
#include "kiln/kiln.h"

namespace kiln::builder {
namespace {

constexpr char kConv[] = "groups=1, kernel_shape=[3,3], pads_begin=[1,1], pads_end=[1,1], strides=[1,1]";

std::string swish(char const* mulInputs, std::string const& extra = "") {
  return std::string("graph {\n"
                     "  input x: f32[1,3,6,6]\n"
                     "  w: f32[4,3,3,3] = Constant \"w\" () {data=random(1)}\n"
                     "  y: f32[1,4,6,6] = Convolution \"conv\" (x, w) {") + kConv + "}\n"
                     "  s: f32[1,4,6,6] = Activation \"sig\" (y) {type=1}\n"
                     "  z: f32[1,4,6,6] = ElementWise \"mul\" (" + mulInputs + ") {op=1}\n" + extra +
         "  output z\n"
         "}\n";
}

TEST(FuseCpuSwish, FusesOnCpuBuilds) {
  PassContext cpu;
  cpu.cpuTarget = true;
  for (char const* order : {"y, s", "s, y"}) {
    auto g = testing::parseInferred(swish(order));
    ASSERT_TRUE(g);
    auto before = g->clone();
    EXPECT_TRUE(testing::runPass(*createFuseCpuSwishPass(), *g, &cpu));
    EXPECT_EQ(testing::countOps(*g, ir::OpType::kActivation), 0);
    EXPECT_EQ(testing::countOps(*g, ir::OpType::kElementWise), 0);
    for (auto const& n : g->nodes())
      if (n->op == ir::OpType::kConvolution) {
        EXPECT_EQ(n->attrs.getInt("cpu_swish", 0), 1);
        EXPECT_EQ(n->fusedFrom.size(), 3u);
      }
    EXPECT_EQ(g->outputs()[0]->name, "z");
    testing::expectSameOutputs(*before, *g, 1e-6);  // the unfused graph rounds y to float first
  }
}

TEST(FuseCpuSwish, LeftAloneElsewhere) {
  PassContext gpu;  // cpuTarget false
  auto g = testing::parseInferred(swish("y, s"));
  ASSERT_TRUE(g);
  EXPECT_FALSE(testing::runPass(*createFuseCpuSwishPass(), *g, &gpu));
  PassContext cpu;
  cpu.cpuTarget = true;
  // The sigmoid is read by a second layer.
  auto g2 = testing::parseInferred(swish("y, s", "  output s\n"));
  ASSERT_TRUE(g2);
  EXPECT_FALSE(testing::runPass(*createFuseCpuSwishPass(), *g2, &cpu));
  // y * y is no swish.
  auto g3 = testing::parseInferred(swish("y, y", "  output s\n"));
  ASSERT_TRUE(g3);
  EXPECT_FALSE(testing::runPass(*createFuseCpuSwishPass(), *g3, &cpu));
}

TEST(FuseCpuSwish, NothingFusesAfterASwish) {
  PassContext cpu;
  cpu.cpuTarget = true;
  auto g = testing::parseInferred(swish("y, s", "  r: f32[1,4,6,6] = Activation \"relu\" (z) {type=0}\n  output r\n"));
  ASSERT_TRUE(g);
  EXPECT_TRUE(testing::runPass(*createFuseCpuSwishPass(), *g, &cpu));
  EXPECT_FALSE(testing::runPass(*createFuseBiasActivationPass(), *g, &cpu));
  EXPECT_EQ(testing::countOps(*g, ir::OpType::kActivation), 1);
}

}  // namespace
}  // namespace kiln::builder
