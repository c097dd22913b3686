// Tests of CustomSkipLayerNormPluginDynamic against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

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
