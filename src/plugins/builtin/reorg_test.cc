// Tests of Reorg_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(ReorgPlugin, DarknetMapping) {
  for (char const* version : {"1", "2"}) {
    IPluginCreator& cr = builtinCreator("Reorg_TRT", version);
    FieldSet f;
    f.add("stride", int32_t{2});
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p);
    EXPECT_STREQ(p->getPluginVersion(), version);
    int n = 2, c = 8, h = 4, w = 6, s = 2, co = c / (s * s);
    std::vector<float> x = randomFloats(static_cast<size_t>(n * c * h * w), 22);
    auto out = expectRoundTrips(cr, *p, {floats(dims({n, c, h, w}), x)});
    ASSERT_TRUE(sameDims(out[0].desc.dims, dims({n, c * 4, h / 2, w / 2})));
    // Output flat position of input coordinates (b, k, j, i) reads the input viewed as [n, c/s^2, h*s, w*s].
    std::vector<float> ref(x.size());
    for (int b = 0; b < n; ++b)
      for (int k = 0; k < c; ++k)
        for (int j = 0; j < h; ++j)
          for (int i = 0; i < w; ++i) {
            int off = k / co, c2 = k % co, h2 = j * s + off / s, w2 = i * s + off % s;
            ref[((b * c + k) * h + j) * w + i] = x[((b * co + c2) * h * s + h2) * w * s + w2];
          }
    expectNear(out[0].as<float>(), ref, 0.f);
  }
}

TEST(ReorgPlugin, RefusesBadStrideAndShape) {
  IPluginCreator& cr = builtinCreator("Reorg_TRT", "2");
  FieldSet zero;
  zero.add("stride", int32_t{0});
  expectRefused(cr, zero);
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 4, 3, 4}), std::vector<float>(48, 0.f))}, out), 0);  // H = 3
}

}  // namespace
}  // namespace kiln::plugin::testing
