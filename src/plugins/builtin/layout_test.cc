// Tests of ScatterND, ResizeNearest_TRT and Reorg_TRT against reference index math.
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(ScatterNdPlugin, ScattersSlices) {
  IPluginCreator& cr = builtinCreator("ScatterND");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  // data [4, 3], indices [2, 1] (rows 3 and 0), updates [2, 3]
  std::vector<float> data = randomFloats(12, 20), upd{1, 2, 3, 4, 5, 6};
  auto out = expectRoundTrips(cr, *p, {floats(dims({4, 3}), data), ints(dims({2, 1}), {3, 0}), floats(dims({2, 3}), upd)});
  std::vector<float> ref = data;
  for (int i = 0; i < 3; ++i) {
    ref[9 + i] = upd[i];
    ref[i] = upd[3 + i];
  }
  expectNear(out[0].as<float>(), ref, 0.f);
}

TEST(ScatterNdPlugin, ElementIndicesInt32AndNegative) {
  IPluginCreator& cr = builtinCreator("ScatterND");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  HostTensor data = ints(dims({2, 2}), {1, 2, 3, 4});
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {data, ints(dims({2, 2}), {0, 1, -1, 0}), ints(dims({2}), {9, 8})}, out), 0);
  EXPECT_EQ(std::vector<int32_t>(out[0].as<int32_t>(), out[0].as<int32_t>() + 4), (std::vector<int32_t>{1, 9, 8, 4}));
  PluginTensorDesc d[4] = {data.desc, data.desc, data.desc, data.desc};
  EXPECT_TRUE(p->supportsFormatCombination(1, d, 3, 1));
  d[1].type = DataType::kFLOAT;
  EXPECT_FALSE(p->supportsFormatCombination(1, d, 3, 1));
}

TEST(ScatterNdPlugin, RefusesOutOfRangeIndexAndBadUpdates) {
  PluginPtr p = createPlugin(builtinCreator("ScatterND"), nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({2, 2}), {0, 0, 0, 0}), ints(dims({1, 1}), {2}), floats(dims({1, 2}), {1, 1})}, out),
            0);
  std::vector<HostTensor> out2;
  EXPECT_NE(runHost(*p, {floats(dims({2, 2}), {0, 0, 0, 0}), ints(dims({1, 1}), {1}), floats(dims({1, 3}), {1, 1, 1})},
                    out2),
            0);
}

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
