// Tests of LReLU_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(LReluPlugin, ComputesLeakyRelu) {
  IPluginCreator& cr = builtinCreator("LReLU_TRT");
  FieldSet f;
  f.add("negSlope", 0.25f);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(2 * 3 * 5, 1);
  std::vector<HostTensor> in{floats(dims({2, 3, 5}), x)};
  auto out = expectRoundTrips(cr, *p, in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(sameDims(out[0].desc.dims, dims({2, 3, 5})));
  std::vector<float> ref;
  for (float v : x) ref.push_back(v >= 0 ? v : 0.25f * v);
  expectNear(out[0].as<float>(), ref, 0.f);
}

TEST(LReluPlugin, DefaultsAndFormats) {
  IPluginCreator& cr = builtinCreator("LReLU_TRT");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> in{floats(dims({4}), {-1.f, 2.f, -3.f, 0.f})};
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, in, out), 0);
  expectNear(out[0].as<float>(), {-0.01f, 2.f, -0.03f, 0.f}, 1e-6f);
  PluginTensorDesc d[2] = {in[0].desc, in[0].desc};
  EXPECT_TRUE(p->supportsFormatCombination(0, d, 1, 1));
  d[0].type = DataType::kHALF;
  EXPECT_FALSE(p->supportsFormatCombination(0, d, 1, 1));
}

TEST(LReluPlugin, RefusesBadFields) {
  FieldSet f;
  f.add("negSlope", std::vector<float>{1.f, 2.f});
  expectRefused(builtinCreator("LReLU_TRT"), f);
}

}  // namespace
}  // namespace kiln::plugin::testing
