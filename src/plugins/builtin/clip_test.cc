// Tests of Clip_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

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

}  // namespace
}  // namespace kiln::plugin::testing
