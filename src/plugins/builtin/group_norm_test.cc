// Tests of GroupNormalizationPlugin against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

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

}  // namespace
}  // namespace kiln::plugin::testing
