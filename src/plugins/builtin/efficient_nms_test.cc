// Tests of EfficientNMS_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

struct Det {
  float score;
  int cls;
  int box;
};

// Per image: candidates (score >= thr, not background) sorted by score desc then (box, class) order, greedy
// suppression at IoU >= the threshold (as TensorRT).
std::vector<Det> refEfficient(std::vector<float> const& boxes, std::vector<float> const& scores, int nb, int nc, int b,
                              float thr, float iou, int maxOut, bool agnostic) {
  std::vector<Det> c;
  for (int i = 0; i < nb; ++i)
    for (int k = 0; k < nc; ++k)
      if (scores[(b * nb + i) * nc + k] >= thr) c.push_back({scores[(b * nb + i) * nc + k], k, i});
  std::stable_sort(c.begin(), c.end(), [](Det const& x, Det const& y) { return x.score > y.score; });
  std::vector<Det> kept;
  for (auto const& d : c) {
    if (static_cast<int>(kept.size()) == maxOut) break;
    bool ok = true;
    for (auto const& k : kept)
      if ((agnostic || k.cls == d.cls) && iouRef(&boxes[(b * nb + k.box) * 4], &boxes[(b * nb + d.box) * 4], 0) >= iou) ok = false;
    if (ok) kept.push_back(d);
  }
  return kept;
}

void checkEfficient(bool agnostic) {
  IPluginCreator& cr = builtinCreator("EfficientNMS_TRT");
  FieldSet f;
  f.add("score_threshold", 0.3f).add("iou_threshold", 0.45f).add("max_output_boxes", int32_t{7});
  f.add("background_class", int32_t{-1}).add("class_agnostic", int32_t{agnostic ? 1 : 0});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  int n = 2, nb = 40, nc = 3;
  std::vector<float> boxes = randomBoxes(static_cast<size_t>(n * nb), 30), scores = randomFloats(static_cast<size_t>(n * nb * nc), 31, 0.f, 1.f);
  auto out = expectRoundTrips(cr, *p, {floats(dims({n, nb, 4}), boxes), floats(dims({n, nb, nc}), scores)});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(sameDims(out[0].desc.dims, dims({n, 1})));
  EXPECT_TRUE(sameDims(out[1].desc.dims, dims({n, 7, 4})));
  EXPECT_EQ(out[3].desc.type, DataType::kINT32);
  for (int b = 0; b < n; ++b) {
    auto ref = refEfficient(boxes, scores, nb, nc, b, 0.3f, 0.45f, 7, agnostic);
    ASSERT_EQ(out[0].as<int32_t>()[b], static_cast<int32_t>(ref.size()));
    for (size_t k = 0; k < 7; ++k) {
      size_t o = static_cast<size_t>(b) * 7 + k;
      if (k < ref.size()) {
        EXPECT_EQ(out[2].as<float>()[o], ref[k].score);
        EXPECT_EQ(out[3].as<int32_t>()[o], ref[k].cls);
        for (int q = 0; q < 4; ++q) EXPECT_EQ(out[1].as<float>()[o * 4 + q], boxes[(b * nb + ref[k].box) * 4 + q]);
      } else {
        EXPECT_EQ(out[2].as<float>()[o], 0.f);
      }
    }
  }
}

TEST(EfficientNmsPlugin, PerClassMatchesReference) { checkEfficient(false); }
TEST(EfficientNmsPlugin, ClassAgnosticMatchesReference) { checkEfficient(true); }

TEST(EfficientNmsPlugin, CenterSizeAnchorsSigmoidAndBackground) {
  IPluginCreator& cr = builtinCreator("EfficientNMS_TRT");
  FieldSet f;
  f.add("score_threshold", 0.5f).add("iou_threshold", 0.5f).add("max_output_boxes", int32_t{4});
  f.add("background_class", int32_t{0}).add("score_activation", int32_t{1}).add("box_coding", int32_t{1});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  // Two anchors (center-size); deltas zero except a log-scale on the second.
  std::vector<float> deltas{0, 0, 0, 0, 0.5f, 0, std::log(2.f), 0};
  std::vector<float> anchors{0.5f, 0.5f, 0.2f, 0.2f, 0.2f, 0.2f, 0.1f, 0.1f};
  // scores: class 0 is background (high, ignored); logits.
  std::vector<float> scores{5.f, 2.f, 5.f, 1.f};
  std::vector<HostTensor> in{floats(dims({1, 2, 4}), deltas), floats(dims({1, 2, 2}), scores), floats(dims({1, 2, 4}), anchors)};
  auto out = expectRoundTrips(cr, *p, in);
  ASSERT_EQ(out[0].as<int32_t>()[0], 2);
  float s0 = 1.f / (1.f + std::exp(-2.f)), s1 = 1.f / (1.f + std::exp(-1.f));
  EXPECT_FLOAT_EQ(out[2].as<float>()[0], s0);
  EXPECT_FLOAT_EQ(out[2].as<float>()[1], s1);
  EXPECT_EQ(out[3].as<int32_t>()[0], 1);
  // Box 0: center (0.5, 0.5), size 0.2 -> corners.
  expectNear(out[1].as<float>(), {0.4f, 0.4f, 0.6f, 0.6f}, 1e-6f);
  // Box 1: center x = 0.5 * 0.1 + 0.2 = 0.25, y = 0.2, w = 0.2, h = 0.1.
  expectNear(out[1].as<float>() + 4, {0.15f, 0.15f, 0.35f, 0.25f}, 1e-6f);
}

TEST(EfficientNmsPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("EfficientNMS_TRT");
  FieldSet a;
  a.add("max_output_boxes", int32_t{0});
  expectRefused(cr, a);
  FieldSet b;
  b.add("box_coding", int32_t{2});
  expectRefused(cr, b);
  FieldSet c;
  c.add("iou_threshold", 1.5f);
  expectRefused(cr, c);
  PluginPtr p = createPlugin(cr, nullptr);
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;
  EXPECT_NE(runHost(*p, {floats(dims({1, 3, 4}), std::vector<float>(12)), floats(dims({1, 2, 2}), std::vector<float>(4))}, out), 0);
}

}  // namespace
}  // namespace kiln::plugin::testing
