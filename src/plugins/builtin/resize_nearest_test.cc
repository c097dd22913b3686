// Tests of ResizeNearest_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(ResizeNearestPlugin, UpsamplesLastTwoDims) {
  IPluginCreator& cr = builtinCreator("ResizeNearest_TRT");
  FieldSet f;
  f.add("scale", 2.f);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x = randomFloats(2 * 3 * 4, 21);
  auto out = expectRoundTrips(cr, *p, {floats(dims({1, 2, 3, 4}), x)});
  ASSERT_TRUE(sameDims(out[0].desc.dims, dims({1, 2, 6, 8})));
  std::vector<float> ref;
  for (int c = 0; c < 2; ++c)
    for (int y = 0; y < 6; ++y)
      for (int q = 0; q < 8; ++q) ref.push_back(x[(c * 3 + y / 2) * 4 + q / 2]);
  expectNear(out[0].as<float>(), ref, 0.f);
  // Non-integral scale: floor(3 * 1.5) = 4 rows.
  FieldSet g;
  g.add("scale", 1.5f);
  PluginPtr q = createPlugin(cr, g.get());
  ASSERT_TRUE(q);
  auto shapes = outputShapes(*q, {dims({1, 3, 3})});
  EXPECT_TRUE(sameDims(shapes[0], dims({1, 4, 4})));
}

TEST(ResizeNearestPlugin, RefusesBadScale) {
  FieldSet none;
  expectRefused(builtinCreator("ResizeNearest_TRT"), none);
  FieldSet neg;
  neg.add("scale", -1.f);
  expectRefused(builtinCreator("ResizeNearest_TRT"), neg);
}

}  // namespace
}  // namespace kiln::plugin::testing
