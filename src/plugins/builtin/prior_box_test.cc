// Tests of PriorBox_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(PriorBoxPlugin, CaffeOrderAndVariances) {
  IPluginCreator& cr = builtinCreator("PriorBox_TRT");
  FieldSet f;
  f.add("minSize", std::vector<float>{4.f}).add("maxSize", std::vector<float>{16.f}).add("aspectRatios", std::vector<float>{4.f});
  f.add("flip", int32_t{1}).add("variance", std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  // Feature 1x2 over a 16x32 image: step 16, cell centres (8, 8) and (24, 8). Priors per cell: min 4x4,
  // sqrt(4*16) = 8x8, ratio 4 -> 8x2, ratio 1/4 -> 2x8.
  auto out = expectRoundTrips(cr, *p, {floats(dims({1, 1, 1, 2}), {0, 0}), floats(dims({1, 1, 16, 32}), std::vector<float>(512))});
  ASSERT_TRUE(sameDims(out[0].desc.dims, dims({2, 32, 1})));
  std::vector<float> ref;
  for (float cx : {8.f, 24.f}) {
    for (auto wh : std::vector<std::pair<float, float>>{{4, 4}, {8, 8}, {8, 2}, {2, 8}}) {
      ref.push_back((cx - wh.first / 2) / 32);
      ref.push_back((8 - wh.second / 2) / 16);
      ref.push_back((cx + wh.first / 2) / 32);
      ref.push_back((8 + wh.second / 2) / 16);
    }
  }
  for (int i = 0; i < 8; ++i)
    for (float v : {0.1f, 0.2f, 0.3f, 0.4f}) ref.push_back(v);
  expectNear(out[0].as<float>(), ref, 1e-6f);
}

TEST(PriorBoxPlugin, RefusesBadFields) {
  IPluginCreator& cr = builtinCreator("PriorBox_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet mism;
  mism.add("minSize", std::vector<float>{4.f, 8.f}).add("maxSize", std::vector<float>{16.f});
  expectRefused(cr, mism);
  FieldSet var;
  var.add("minSize", std::vector<float>{4.f}).add("variance", std::vector<float>{0.1f});
  expectRefused(cr, var);
}

}  // namespace
}  // namespace kiln::plugin::testing
