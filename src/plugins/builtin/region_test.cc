// Tests of Region_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(RegionPlugin, LogisticAndSoftmaxPerAnchor) {
  IPluginCreator& cr = builtinCreator("Region_TRT");
  FieldSet f;
  f.add("num", int32_t{2}).add("coords", int32_t{4}).add("classes", int32_t{3});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  int hw = 3;
  std::vector<float> x = randomFloats(2 * 8 * hw, 51, -4.f, 4.f);
  auto out = expectRoundTrips(cr, *p, {floats(dims({1, 16, 1, 3}), x)});
  std::vector<float> ref(x.size());
  auto sig = [](double v) { return static_cast<float>(1 / (1 + std::exp(-v))); };
  for (int a = 0; a < 2; ++a) {
    for (int q = 0; q < hw; ++q) {
      auto at = [&](int k) { return (a * 8 + k) * hw + q; };
      ref[at(0)] = sig(x[at(0)]);
      ref[at(1)] = sig(x[at(1)]);
      ref[at(2)] = x[at(2)];
      ref[at(3)] = x[at(3)];
      ref[at(4)] = sig(x[at(4)]);
      double s = 0;
      for (int k = 5; k < 8; ++k) s += std::exp(static_cast<double>(x[at(k)]));
      for (int k = 5; k < 8; ++k) ref[at(k)] = static_cast<float>(std::exp(static_cast<double>(x[at(k)])) / s);
    }
  }
  expectNear(out[0].as<float>(), ref, 1e-5f);
}

TEST(RegionPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("Region_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet coords;
  coords.add("num", int32_t{1}).add("coords", int32_t{1}).add("classes", int32_t{2});
  expectRefused(cr, coords);
  FieldSet ok;
  ok.add("num", int32_t{1}).add("coords", int32_t{4}).add("classes", int32_t{2});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 8, 1, 1}), std::vector<float>(8))}, out), 0);  // needs 7 channels
}

}  // namespace
}  // namespace kiln::plugin::testing
