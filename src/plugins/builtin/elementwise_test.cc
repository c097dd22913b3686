// Tests of LReLU_TRT, Clip_TRT and CustomGeluPluginDynamic against reference math.
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

TEST(ClipPlugin, Clips) {
  IPluginCreator& cr = builtinCreator("Clip_TRT");
  FieldSet f;
  f.add("clipMin", -0.5f).add("clipMax", 0.25f);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(64, 2);
  auto out = expectRoundTrips(cr, *p, {floats(dims({8, 8}), x)});
  std::vector<float> ref;
  for (float v : x) ref.push_back(std::min(std::max(v, -0.5f), 0.25f));
  expectNear(out[0].as<float>(), ref, 0.f);
}

TEST(ClipPlugin, RefusesMissingOrInvertedBounds) {
  FieldSet a;
  a.add("clipMin", 0.f);
  expectRefused(builtinCreator("Clip_TRT"), a);
  FieldSet b;
  b.add("clipMin", 1.f).add("clipMax", 0.f);
  expectRefused(builtinCreator("Clip_TRT"), b);
}

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

TEST(Fp16, ConversionsRoundTrip) {
  for (float v : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f}) {
    EXPECT_EQ(halfToFloat(floatToHalf(v)), v) << v;
  }
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(halfToFloat(floatToHalf(1.0f + 1.f / 4096)), 1.0f);  // ties to even
}

}  // namespace
}  // namespace kiln::plugin::testing
