// Tests of InstanceNormalization_TRT, GroupNormalizationPlugin and CustomSkipLayerNormPluginDynamic against
// reference math (double precision, written out here).
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

// Normalizes x over [start, start + len) in double.
void refNorm(std::vector<double>& y, std::vector<float> const& x, size_t start, size_t len, double eps) {
  double m = 0, v = 0;
  for (size_t i = 0; i < len; ++i) m += x[start + i];
  m /= static_cast<double>(len);
  for (size_t i = 0; i < len; ++i) v += (x[start + i] - m) * (x[start + i] - m);
  v /= static_cast<double>(len);
  for (size_t i = 0; i < len; ++i) y[start + i] = (x[start + i] - m) / std::sqrt(v + eps);
}

TEST(InstanceNormPlugin, NormalizesPerSampleAndChannel) {
  IPluginCreator& cr = builtinCreator("InstanceNormalization_TRT");
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

TEST(GroupNormPlugin, NormalizesGroups) {
  IPluginCreator& cr = builtinCreator("GroupNormalizationPlugin");
  FieldSet f;
  f.add("eps", 1e-4f).add("num_groups", int32_t{2});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(2 * 4 * 3 * 3, 7), g{1.f, 2.f, 3.f, 4.f}, b{0.1f, 0.2f, 0.3f, 0.4f};
  auto out = expectRoundTrips(cr, *p, {floats(dims({2, 4, 3, 3}), x), floats(dims({4}), g), floats(dims({4}), b)});
  std::vector<double> y(x.size());
  for (size_t s = 0; s < 4; ++s) refNorm(y, x, s * 18, 18, 1e-4);
  std::vector<float> ref(x.size());
  for (size_t i = 0; i < x.size(); ++i) ref[i] = static_cast<float>(y[i] * g[(i / 9) % 4] + b[(i / 9) % 4]);
  expectNear(out[0].as<float>(), ref, 1e-5f);
}

TEST(GroupNormPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("GroupNormalizationPlugin");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet zero;
  zero.add("num_groups", int32_t{0});
  expectRefused(cr, zero);
  FieldSet three;
  three.add("num_groups", int32_t{3});
  PluginPtr p = createPlugin(cr, three.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 4, 2}), std::vector<float>(8, 1.f)), floats(dims({4}), {1, 1, 1, 1}),
                         floats(dims({4}), {0, 0, 0, 0})},
                    out),
            0);
}

TEST(SkipLayerNormPlugin, AddsSkipAndBiasThenNormalizes) {
  IPluginCreator& cr = builtinCreator("CustomSkipLayerNormPluginDynamic");
  int32_t ld = 8;
  std::vector<float> gamma = randomFloats(8, 8, 0.5f, 1.5f), beta = randomFloats(8, 9), bias = randomFloats(8, 10);
  FieldSet f;
  f.add("ld", ld).add("type_id", int32_t{0}).add("gamma", gamma).add("beta", beta).add("bias", bias);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  Dims d = dims({3, 2, 8, 1, 1});
  std::vector<float> x = randomFloats(48, 11), s = randomFloats(48, 12);
  auto out = expectRoundTrips(cr, *p, {floats(d, x), floats(d, s)});
  std::vector<float> sum(48);
  for (size_t i = 0; i < 48; ++i) sum[i] = x[i] + s[i] + bias[i % 8];
  std::vector<double> y(48);
  for (size_t r = 0; r < 6; ++r) refNorm(y, sum, r * 8, 8, 1e-5);
  std::vector<float> ref(48);
  for (size_t i = 0; i < 48; ++i) ref[i] = static_cast<float>(y[i] * gamma[i % 8] + beta[i % 8]);
  expectNear(out[0].as<float>(), ref, 1e-5f);
  EXPECT_TRUE(sameDims(out[0].desc.dims, d));
}

TEST(SkipLayerNormPlugin, LdFromBetaAndBadFields) {
  IPluginCreator& cr = builtinCreator("CustomSkipLayerNormPluginDynamic");
  FieldSet f;
  f.add("gamma", std::vector<float>(4, 1.f)).add("beta", std::vector<float>(4, 0.f));
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_EQ(runHost(*p, {floats(dims({2, 4}), randomFloats(8, 1)), floats(dims({2, 4}), randomFloats(8, 2))}, out), 0);
  std::vector<HostTensor> bad;
  EXPECT_NE(runHost(*p, {floats(dims({2, 5}), randomFloats(10, 1)), floats(dims({2, 5}), randomFloats(10, 2))}, bad), 0);
  FieldSet short_;
  short_.add("ld", int32_t{4}).add("gamma", std::vector<float>(3, 1.f)).add("beta", std::vector<float>(4, 0.f));
  expectRefused(cr, short_);
  FieldSet int8;
  int8.add("type_id", int32_t{2}).add("gamma", std::vector<float>(4, 1.f)).add("beta", std::vector<float>(4, 0.f));
  expectRefused(cr, int8);
}

}  // namespace
}  // namespace kiln::plugin::testing
