// Tests of CustomGeluPluginDynamic against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

float geluRef(float v) { return 0.5f * v * (1.f + std::tanh(std::sqrt(2.f / 3.14159265358979f) * (v + 0.044715f * v * v * v))); }

TEST(GeluPlugin, ComputesGeluWithBias) {
  IPluginCreator& cr = builtinCreator("CustomGeluPluginDynamic");
  std::vector<float> bias{0.1f, -0.2f, 0.3f};
  FieldSet f;
  f.add("type_id", int32_t{0}).add("bias", bias);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(4 * 3, 3, -3.f, 3.f);
  auto out = expectRoundTrips(cr, *p, {floats(dims({4, 3}), x)});
  std::vector<float> ref;
  for (size_t i = 0; i < x.size(); ++i) ref.push_back(geluRef(x[i] + bias[i % 3]));
  expectNear(out[0].as<float>(), ref, 1e-5f);
}

TEST(GeluPlugin, HalfComputesInFloat) {
  IPluginCreator& cr = builtinCreator("CustomGeluPluginDynamic");
  FieldSet f;
  f.add("type_id", int32_t{1});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(16, 4, -2.f, 2.f);
  HostTensor t(dims({16}), DataType::kHALF);
  for (size_t i = 0; i < x.size(); ++i) t.as<uint16_t>()[i] = floatToHalf(x[i]);
  PluginTensorDesc d[2] = {t.desc, t.desc};
  EXPECT_TRUE(p->supportsFormatCombination(0, d, 1, 1));
  d[0].type = DataType::kFLOAT;
  EXPECT_FALSE(p->supportsFormatCombination(0, d, 1, 1));
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {t}, out), 0);
  ASSERT_EQ(out[0].desc.type, DataType::kHALF);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(halfToFloat(out[0].as<uint16_t>()[i]), geluRef(halfToFloat(floatToHalf(x[i]))), 2e-3f);
  }
}

TEST(GeluPlugin, RefusesBadTypeAndMismatchedBias) {
  FieldSet f;
  f.add("type_id", int32_t{2});
  expectRefused(builtinCreator("CustomGeluPluginDynamic"), f);
  FieldSet g;
  g.add("bias", std::vector<float>{1.f, 2.f});
  PluginPtr p = createPlugin(builtinCreator("CustomGeluPluginDynamic"), g.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({2, 3}), std::vector<float>(6, 0.f))}, out), 0);
}

}  // namespace
}  // namespace kiln::plugin::testing
