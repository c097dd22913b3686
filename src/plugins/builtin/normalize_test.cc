// Tests of Normalize_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(NormalizePlugin, AcrossChannelsAndSpatial) {
  IPluginCreator& cr = builtinCreator("Normalize_TRT");
  std::vector<float> x = randomFloats(2 * 3 * 4, 50);
  for (int across = 0; across < 2; ++across) {
    FieldSet f;
    f.add("weights", std::vector<float>{1.f, 2.f, 3.f}).add("acrossSpatial", int32_t{across}).add("eps", 1e-8f);
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p);
    auto out = expectRoundTrips(cr, *p, {floats(dims({2, 3, 2, 2}), x)});
    std::vector<float> ref(x.size());
    for (int b = 0; b < 2; ++b) {
      for (int q = 0; q < 4; ++q) {
        double sq = 0;
        for (int c = 0; c < 3; ++c)
          for (int pp = 0; pp < 4; ++pp)
            if (across || pp == q) sq += x[(b * 3 + c) * 4 + pp] * x[(b * 3 + c) * 4 + pp];
        for (int c = 0; c < 3; ++c) ref[(b * 3 + c) * 4 + q] = static_cast<float>(x[(b * 3 + c) * 4 + q] / std::sqrt(sq + 1e-8) * (c + 1));
      }
    }
    expectNear(out[0].as<float>(), ref, 1e-5f);
  }
}

TEST(NormalizePlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("Normalize_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet shared;
  shared.add("weights", std::vector<float>{1.f, 2.f}).add("channelShared", int32_t{1});
  expectRefused(cr, shared);
  FieldSet nb;
  nb.add("weights", std::vector<float>{1.f, 2.f}).add("nbWeights", int32_t{3});
  expectRefused(cr, nb);
  FieldSet ok;
  ok.add("weights", std::vector<float>{1.f, 2.f});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 3, 1, 1}), {1, 2, 3})}, out), 0);
}

}  // namespace
}  // namespace kiln::plugin::testing
