// Tests of InstanceNormalization_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(InstanceNormPlugin, NormalizesPerSampleAndChannel) {
  for (char const* version : {"1", "2"}) {
    IPluginCreator& cr = builtinCreator("InstanceNormalization_TRT", version);
    std::vector<float> s{1.f, 2.f, 0.5f}, b{0.f, -1.f, 0.25f};
    FieldSet f;
    f.add("epsilon", 1e-3f).add("scales", s).add("bias", b);
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p);
    std::vector<float> x = randomFloats(2 * 3 * 4 * 5, 5);
    auto out = expectRoundTrips(cr, *p, {floats(dims({2, 3, 4, 5}), x)});
    std::vector<double> y(x.size());
    std::vector<float> ref(x.size());
    for (size_t nc = 0; nc < 6; ++nc) refNorm(y, x, nc * 20, 20, 1e-3);
    for (size_t i = 0; i < x.size(); ++i) ref[i] = static_cast<float>(y[i] * s[(i / 20) % 3] + b[(i / 20) % 3]);
    expectNear(out[0].as<float>(), ref, 1e-5f);
    EXPECT_STREQ(p->getPluginVersion(), version);
  }
}

TEST(InstanceNormPlugin, ReluAlphaAndHalf) {
  IPluginCreator& cr = builtinCreator("InstanceNormalization_TRT");
  FieldSet f;
  f.add("scales", std::vector<float>{1.f, 1.f}).add("bias", std::vector<float>{0.f, 0.f});
  f.add("relu", int32_t{1}).add("alpha", 0.1f);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(2 * 8, 6);
  HostTensor h(dims({1, 2, 2, 2, 2}), DataType::kHALF);
  for (size_t i = 0; i < x.size(); ++i) h.as<uint16_t>()[i] = floatToHalf(x[i]);
  PluginTensorDesc d[2] = {h.desc, h.desc};
  EXPECT_TRUE(p->supportsFormatCombination(0, d, 1, 1));
  EXPECT_TRUE(p->supportsFormatCombination(1, d, 1, 1));
  d[1].type = DataType::kFLOAT;
  EXPECT_FALSE(p->supportsFormatCombination(1, d, 1, 1));
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {h}, out), 0);
  std::vector<float> xr(x.size());
  for (size_t i = 0; i < x.size(); ++i) xr[i] = halfToFloat(floatToHalf(x[i]));
  std::vector<double> y(x.size());
  refNorm(y, xr, 0, 8, 1e-5);
  refNorm(y, xr, 8, 8, 1e-5);
  for (size_t i = 0; i < x.size(); ++i) {
    double r = y[i] < 0 ? 0.1 * y[i] : y[i];
    EXPECT_NEAR(halfToFloat(out[0].as<uint16_t>()[i]), r, 4e-3);
  }
}

TEST(InstanceNormPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("InstanceNormalization_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet mismatch;
  mismatch.add("scales", std::vector<float>{1.f, 2.f}).add("bias", std::vector<float>{1.f});
  expectRefused(cr, mismatch);
  FieldSet ok;
  ok.add("scales", std::vector<float>{1.f, 2.f}).add("bias", std::vector<float>{1.f, 2.f});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 3, 2, 2}), std::vector<float>(12, 1.f))}, out), 0);  // C = 3, not 2
}

}  // namespace
}  // namespace kiln::plugin::testing
