// Tests of ModulatedDeformConv2d against reference math: with zero offsets and unit masks it is a plain
// (grouped, strided, padded) convolution; with a 1x1 kernel each output is the masked bilinear sample.
#include <cmath>

#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

TEST(DeformConvPlugin, ZeroOffsetsIsConvolution) {
  IPluginCreator& cr = builtinCreator("ModulatedDeformConv2d");
  FieldSet f;
  f.add("stride", std::vector<int32_t>{2, 1}).add("padding", std::vector<int32_t>{1, 0}).add("group", int32_t{2});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  int n = 1, cin = 4, h = 5, w = 4, cout = 2, kh = 3, kw = 2;
  int ho = (h + 2 - 3) / 2 + 1, wo = (w - 2) / 1 + 1;
  std::vector<float> x = randomFloats(n * cin * h * w, 60), wt = randomFloats(cout * 2 * kh * kw, 61), bias{0.5f, -0.25f};
  std::vector<HostTensor> in{floats(dims({n, cin, h, w}), x), floats(dims({n, 2 * kh * kw, ho, wo}), std::vector<float>(2 * kh * kw * ho * wo, 0.f)),
                             floats(dims({n, kh * kw, ho, wo}), std::vector<float>(kh * kw * ho * wo, 1.f)),
                             floats(dims({cout, 2, kh, kw}), wt), floats(dims({cout}), bias)};
  auto out = expectRoundTrips(cr, *p, in);
  ASSERT_TRUE(sameDims(out[0].desc.dims, dims({n, cout, ho, wo})));
  std::vector<float> ref;
  for (int co = 0; co < cout; ++co)
    for (int oh = 0; oh < ho; ++oh)
      for (int ow = 0; ow < wo; ++ow) {
        double acc = bias[co];
        for (int ci = 0; ci < 2; ++ci)
          for (int i = 0; i < kh; ++i)
            for (int j = 0; j < kw; ++j) {
              int r = oh * 2 - 1 + i, c = ow + j, ch = co * 2 + ci;
              if (r >= 0 && r < h && c >= 0 && c < w) acc += wt[((co * 2 + ci) * kh + i) * kw + j] * x[(ch * h + r) * w + c];
            }
        ref.push_back(static_cast<float>(acc));
      }
  expectNear(out[0].as<float>(), ref, 1e-5f);
}

TEST(DeformConvPlugin, FractionalOffsetsAndMask) {
  IPluginCreator& cr = builtinCreator("ModulatedDeformConv2d");
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  // 1 channel 3x3 image, 1x1 kernel of weight 2, offsets (dy, dx) = (0.25, 0.5) everywhere, mask 0.5.
  std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<float> off(18);
  for (int i = 0; i < 9; ++i) {
    off[i] = 0.25f;
    off[9 + i] = 0.5f;
  }
  std::vector<HostTensor> in{floats(dims({1, 1, 3, 3}), x), floats(dims({1, 2, 3, 3}), off),
                             floats(dims({1, 1, 3, 3}), std::vector<float>(9, 0.5f)), floats(dims({1, 1, 1, 1}), {2.f})};
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, in, out), 0);
  auto px = [&](int r, int c) { return (r < 3 && c < 3) ? x[r * 3 + c] : 0.f; };
  std::vector<float> ref;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      float v = 0.75f * 0.5f * px(r, c) + 0.75f * 0.5f * px(r, c + 1) + 0.25f * 0.5f * px(r + 1, c) + 0.25f * 0.5f * px(r + 1, c + 1);
      ref.push_back(2.f * v * 0.5f);
    }
  expectNear(out[0].as<float>(), ref, 1e-6f);
}

TEST(DeformConvPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("ModulatedDeformConv2d");
  FieldSet a;
  a.add("stride", std::vector<int32_t>{0, 1});
  expectRefused(cr, a);
  FieldSet b;
  b.add("padding", std::vector<int32_t>{1});
  expectRefused(cr, b);
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;  // offset has 1 channel instead of 2
  EXPECT_NE(runHost(*p, {floats(dims({1, 1, 2, 2}), std::vector<float>(4)), floats(dims({1, 1, 2, 2}), std::vector<float>(4)),
                         floats(dims({1, 1, 2, 2}), std::vector<float>(4)), floats(dims({1, 1, 1, 1}), {1.f})},
                    out),
            0);
}

}  // namespace
}  // namespace kiln::plugin::testing
