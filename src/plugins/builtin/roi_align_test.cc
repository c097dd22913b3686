// Tests of ROIAlign_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(RoiAlignPlugin, AverageOfBilinearSamples) {
  IPluginCreator& cr = builtinCreator("ROIAlign_TRT");
  FieldSet f;
  f.add("output_height", int32_t{1}).add("output_width", int32_t{1}).add("sampling_ratio", int32_t{2});
  f.add("coordinate_transformation_mode", int32_t{0});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  // X = 4x4 plane with value = 10 * row + col (linear, so bilinear samples are exact); ROI (0,0)-(2,2):
  // bins of 2, samples at 0.5 and 1.5 -> mean of (r*10 + c) at r, c in {0.5, 1.5} = 11.
  std::vector<float> x(16);
  for (int i = 0; i < 16; ++i) x[i] = static_cast<float>(10 * (i / 4) + i % 4);
  auto out = expectRoundTrips(cr, *p, {floats(dims({1, 1, 4, 4}), x), floats(dims({1, 4}), {0, 0, 2, 2}), ints(dims({1}), {0})});
  ASSERT_TRUE(sameDims(out[0].desc.dims, dims({1, 1, 1, 1})));
  EXPECT_NEAR(out[0].as<float>()[0], 11.f, 1e-5f);
}

TEST(RoiAlignPlugin, HalfPixelMaxModeAndBatchIndex) {
  IPluginCreator& cr = builtinCreator("ROIAlign_TRT");
  FieldSet f;
  f.add("output_height", int32_t{2}).add("output_width", int32_t{2}).add("sampling_ratio", int32_t{1}).add("mode", int32_t{0});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  std::vector<float> x(2 * 9);
  for (int i = 0; i < 18; ++i) x[i] = static_cast<float>(i);
  // ROI on image 1, (0.5,0.5)-(2.5,2.5) shifted by -0.5 -> (0,0)-(2,2); one sample per bin at the bin centre
  // (0.5, 0.5), (0.5, 1.5), ...; max mode keeps the largest weighted corner value.
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {floats(dims({2, 1, 3, 3}), x), floats(dims({1, 4}), {0.5f, 0.5f, 2.5f, 2.5f}), ints(dims({1}), {1})}, out), 0);
  auto ref = [&](float yy, float xx) {
    int y0 = static_cast<int>(yy), x0 = static_cast<int>(xx);
    float ly = yy - y0, lx = xx - x0;
    float const* pl = &x[9];
    return std::max(std::max((1 - ly) * (1 - lx) * pl[y0 * 3 + x0], (1 - ly) * lx * pl[y0 * 3 + x0 + 1]),
                    std::max(ly * (1 - lx) * pl[(y0 + 1) * 3 + x0], ly * lx * pl[(y0 + 1) * 3 + x0 + 1]));
  };
  expectNear(out[0].as<float>(), {ref(0.5f, 0.5f), ref(0.5f, 1.5f), ref(1.5f, 0.5f), ref(1.5f, 1.5f)}, 1e-5f);
  std::vector<HostTensor> bad;
  EXPECT_NE(runHost(*p, {floats(dims({2, 1, 3, 3}), x), floats(dims({1, 4}), {0, 0, 1, 1}), ints(dims({1}), {2})}, bad), 0);
}

TEST(RoiAlignPlugin, RefusesBadFields) {
  IPluginCreator& cr = builtinCreator("ROIAlign_TRT");
  FieldSet a;
  a.add("mode", int32_t{2});
  expectRefused(cr, a);
  FieldSet b;
  b.add("output_height", int32_t{0});
  expectRefused(cr, b);
  FieldSet c;
  c.add("spatial_scale", 0.f);
  expectRefused(cr, c);
}

}  // namespace
}  // namespace kiln::plugin::testing
