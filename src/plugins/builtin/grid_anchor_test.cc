// Tests of GridAnchor_TRT and GridAnchorRect_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(GridAnchorPlugin, LayerScalesAndRatios) {
  IPluginCreator& cr = builtinCreator("GridAnchor_TRT");
  FieldSet f;
  f.add("minSize", 0.2f).add("maxSize", 0.8f).add("numLayers", int32_t{2});
  f.add("aspectRatios", std::vector<float>{1.f, 4.f, 0.25f}).add("variance", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f});
  f.add("featureMapShapes", std::vector<int32_t>{2, 1});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  ASSERT_EQ(p->getNbOutputs(), 2);
  auto out = expectRoundTrips(cr, *p, {});
  ASSERT_TRUE(sameDims(out[0].desc.dims, dims({2, 2 * 2 * 3 * 4, 1})));
  ASSERT_TRUE(sameDims(out[1].desc.dims, dims({2, 1 * 1 * 4 * 4, 1})));
  // Layer 0, cell (0, 0) centre (0.25, 0.25): scales 0.1, 0.2, 0.2 with ratios 1, 4, 1/4.
  expectNear(out[0].as<float>(), {0.2f, 0.2f, 0.3f, 0.3f, 0.05f, 0.2f, 0.45f, 0.3f, 0.2f, 0.05f, 0.3f, 0.45f}, 1e-6f);
  // Layer 1 (last), centre (0.5, 0.5): scale 0.8 for each ratio, then ratio 1 at sqrt(0.8 * 1).
  float s = std::sqrt(0.8f);
  expectNear(out[1].as<float>(), {0.1f, 0.1f, 0.9f, 0.9f, -0.3f, 0.3f, 1.3f, 0.7f, 0.3f, -0.3f, 0.7f, 1.3f,
                                  0.5f - s / 2, 0.5f - s / 2, 0.5f + s / 2, 0.5f + s / 2}, 1e-6f);
  expectNear(out[1].as<float>() + 16, {0.1f, 0.1f, 0.2f, 0.2f}, 0.f);
}

TEST(GridAnchorPlugin, RefusesBadFields) {
  IPluginCreator& cr = builtinCreator("GridAnchor_TRT");
  FieldSet a;  // featureMapShapes missing for the default 6 layers
  a.add("aspectRatios", std::vector<float>{1.f, 2.f, 0.5f}).add("variance", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f});
  expectRefused(cr, a);
  FieldSet b;
  b.add("numLayers", int32_t{1}).add("featureMapShapes", std::vector<int32_t>{3});
  b.add("aspectRatios", std::vector<float>{1.f, 2.f}).add("variance", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f});
  expectRefused(cr, b);
  FieldSet c;
  c.add("numLayers", int32_t{1}).add("featureMapShapes", std::vector<int32_t>{3});
  c.add("aspectRatios", std::vector<float>{1.f, 2.f, 0.5f}).add("variance", std::vector<float>{0.1f});
  expectRefused(cr, c);
  FieldSet rect;  // GridAnchorRect_TRT needs H, W pairs
  rect.add("numLayers", int32_t{1}).add("featureMapShapes", std::vector<int32_t>{3});
  rect.add("aspectRatios", std::vector<float>{1.f, 2.f, 0.5f}).add("variance", std::vector<float>{0.1f, 0.1f, 0.2f, 0.2f});
  expectRefused(builtinCreator("GridAnchorRect_TRT"), rect);
}

}  // namespace
}  // namespace kiln::plugin::testing
