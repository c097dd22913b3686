// Tests of ROIAlign_TRT, PriorBox_TRT, Normalize_TRT and Region_TRT against reference math written here.
#include <cmath>

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

TEST(NormalizePlugin, AcrossChannelsAndSpatial) {
  IPluginCreator& cr = builtinCreator("Normalize_TRT");
  std::vector<float> x = randomFloats(2 * 3 * 4, 50);
  for (int across = 0; across < 2; ++across) {
    FieldSet f;
    f.add("weights", std::vector<float>{1.f, 2.f, 3.f}).add("acrossSpatial", int32_t{across}).add("eps", 1e-8f);
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p);
    auto out = expectRoundTrips(cr, *p, {floats(dims({2, 3, 2, 2}), x)});
    std::vector<float> ref(x.size());
    for (int b = 0; b < 2; ++b) {
      for (int q = 0; q < 4; ++q) {
        double sq = 0;
        for (int c = 0; c < 3; ++c)
          for (int pp = 0; pp < 4; ++pp)
            if (across || pp == q) sq += x[(b * 3 + c) * 4 + pp] * x[(b * 3 + c) * 4 + pp];
        for (int c = 0; c < 3; ++c) ref[(b * 3 + c) * 4 + q] = static_cast<float>(x[(b * 3 + c) * 4 + q] / std::sqrt(sq + 1e-8) * (c + 1));
      }
    }
    expectNear(out[0].as<float>(), ref, 1e-5f);
  }
}

TEST(NormalizePlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("Normalize_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet shared;
  shared.add("weights", std::vector<float>{1.f, 2.f}).add("channelShared", int32_t{1});
  expectRefused(cr, shared);
  FieldSet nb;
  nb.add("weights", std::vector<float>{1.f, 2.f}).add("nbWeights", int32_t{3});
  expectRefused(cr, nb);
  FieldSet ok;
  ok.add("weights", std::vector<float>{1.f, 2.f});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 3, 1, 1}), {1, 2, 3})}, out), 0);
}

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
