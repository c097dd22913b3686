// Tests of EfficientNMS_TRT, BatchedNMSDynamic_TRT and BatchedNMS_TRT against a plain-loop reference NMS
// written here.
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

double iouRef(float const* a, float const* b, double off) {
  double w = std::min(a[2], b[2]) - std::max(a[0], b[0]) + off, h = std::min(a[3], b[3]) - std::max(a[1], b[1]) + off;
  double inter = (w > 0 && h > 0) ? w * h : 0;
  double u = (a[2] - a[0] + off) * (a[3] - a[1] + off) + (b[2] - b[0] + off) * (b[3] - b[1] + off) - inter;
  return u > 0 ? inter / u : 0;
}

// Random well-formed corner boxes in [0, 1] with clusters so that suppression happens.
std::vector<float> randomBoxes(size_t n, uint32_t seed) {
  std::vector<float> r = randomFloats(n * 4, seed, 0.f, 1.f), b(n * 4);
  for (size_t i = 0; i < n; ++i) {
    float cx = std::floor(r[i * 4] * 3) / 3 + 0.05f * r[i * 4 + 1], cy = std::floor(r[i * 4 + 2] * 2) / 2 + 0.05f * r[i * 4 + 3];
    b[i * 4] = cx;
    b[i * 4 + 1] = cy;
    b[i * 4 + 2] = cx + 0.3f;
    b[i * 4 + 3] = cy + 0.4f;
  }
  return b;
}

struct Det {
  float score;
  int cls;
  int box;
};

// Per image: candidates (score > thr, not background) sorted by score desc then (box, class) order, greedy.
std::vector<Det> refEfficient(std::vector<float> const& boxes, std::vector<float> const& scores, int nb, int nc, int b,
                              float thr, float iou, int maxOut, bool agnostic) {
  std::vector<Det> c;
  for (int i = 0; i < nb; ++i)
    for (int k = 0; k < nc; ++k)
      if (scores[(b * nb + i) * nc + k] > thr) c.push_back({scores[(b * nb + i) * nc + k], k, i});
  std::stable_sort(c.begin(), c.end(), [](Det const& x, Det const& y) { return x.score > y.score; });
  std::vector<Det> kept;
  for (auto const& d : c) {
    if (static_cast<int>(kept.size()) == maxOut) break;
    bool ok = true;
    for (auto const& k : kept)
      if ((agnostic || k.cls == d.cls) && iouRef(&boxes[(b * nb + k.box) * 4], &boxes[(b * nb + d.box) * 4], 0) > iou) ok = false;
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

// BatchedNMS reference: per class, top-k by score of those >= thr, greedy, merge, top keepTopK.
void checkBatched(char const* name, bool shareLocation, bool normalized) {
  IPluginCreator& cr = builtinCreator(name);
  int n = 2, nb = 30, nc = 3, topK = 12, keep = 10;
  FieldSet f;
  f.add("shareLocation", int32_t{shareLocation}).add("backgroundLabelId", int32_t{1}).add("numClasses", nc);
  f.add("topK", topK).add("keepTopK", keep).add("scoreThreshold", 0.2f).add("iouThreshold", 0.5f);
  f.add("isNormalized", int32_t{normalized}).add("clipBoxes", int32_t{0});
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p);
  int lc = shareLocation ? 1 : nc;
  std::vector<float> boxes = randomBoxes(static_cast<size_t>(n * nb * lc), 40);
  if (!normalized) for (float& v : boxes) v *= 20.f;
  std::vector<float> scores = randomFloats(static_cast<size_t>(n * nb * nc), 41, 0.f, 1.f);
  auto out = expectRoundTrips(cr, *p, {floats(dims({n, nb, lc, 4}), boxes), floats(dims({n, nb, nc}), scores)});
  EXPECT_EQ(out[3].desc.type, DataType::kFLOAT);
  double off = normalized ? 0 : 1;
  for (int b = 0; b < n; ++b) {
    std::vector<std::pair<float, std::pair<int, int>>> all;  // score, (class, box)
    for (int c = 0; c < nc; ++c) {
      if (c == 1) continue;
      std::vector<std::pair<float, int>> cand;
      for (int i = 0; i < nb; ++i) if (scores[(b * nb + i) * nc + c] >= 0.2f) cand.push_back({scores[(b * nb + i) * nc + c], i});
      std::stable_sort(cand.begin(), cand.end(), [](auto const& x, auto const& y) { return x.first > y.first; });
      if (static_cast<int>(cand.size()) > topK) cand.resize(topK);
      std::vector<std::pair<float, int>> kept;
      for (auto const& d : cand) {
        bool ok = true;
        for (auto const& k : kept) {
          float const* A = &boxes[((b * nb + k.second) * lc + (shareLocation ? 0 : c)) * 4];
          float const* B = &boxes[((b * nb + d.second) * lc + (shareLocation ? 0 : c)) * 4];
          if (iouRef(A, B, off) > 0.5) ok = false;
        }
        if (ok) kept.push_back(d);
      }
      for (auto const& k : kept) all.push_back({k.first, {c, k.second}});
    }
    std::stable_sort(all.begin(), all.end(), [](auto const& x, auto const& y) { return x.first > y.first; });
    int count = std::min<int>(keep, static_cast<int>(all.size()));
    ASSERT_EQ(out[0].as<int32_t>()[b], count);
    for (int k = 0; k < keep; ++k) {
      size_t o = static_cast<size_t>(b * keep + k);
      if (k < count) {
        EXPECT_EQ(out[2].as<float>()[o], all[k].first);
        EXPECT_EQ(out[3].as<float>()[o], static_cast<float>(all[k].second.first));
        int c = all[k].second.first, i = all[k].second.second;
        for (int q = 0; q < 4; ++q) EXPECT_EQ(out[1].as<float>()[o * 4 + q], boxes[((b * nb + i) * lc + (shareLocation ? 0 : c)) * 4 + q]);
      } else {
        EXPECT_EQ(out[3].as<float>()[o], -1.f);
        EXPECT_EQ(out[2].as<float>()[o], 0.f);
      }
    }
  }
}

TEST(BatchedNmsPlugin, DynamicSharedLocation) { checkBatched("BatchedNMSDynamic_TRT", true, true); }
TEST(BatchedNmsPlugin, DynamicPerClassBoxesUnnormalized) { checkBatched("BatchedNMSDynamic_TRT", false, false); }
TEST(BatchedNmsPlugin, Static) { checkBatched("BatchedNMS_TRT", true, true); }

TEST(BatchedNmsPlugin, NoTopKLimitAndClipping) {
  IPluginCreator& cr = builtinCreator("BatchedNMSDynamic_TRT");
  int nb = 5000;
  FieldSet f;
  f.add("numClasses", int32_t{1}).add("topK", int32_t{5000}).add("keepTopK", int32_t{5000}).add("iouThreshold", 0.5f);
  PluginPtr p = createPlugin(cr, f.get());
  ASSERT_TRUE(p) << "topK above TensorRT's 4096 must be accepted";
  // Disjoint boxes along x (no suppression), some reaching past 1 to exercise clipping.
  std::vector<float> boxes(static_cast<size_t>(nb) * 4), scores(static_cast<size_t>(nb));
  for (int i = 0; i < nb; ++i) {
    boxes[i * 4] = i * 0.001f;
    boxes[i * 4 + 1] = 0.f;
    boxes[i * 4 + 2] = i * 0.001f + 0.0005f;
    boxes[i * 4 + 3] = 1.5f;
    scores[i] = 0.5f + 0.5f * static_cast<float>(i) / nb;
  }
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, {floats(dims({1, nb, 1, 4}), boxes), floats(dims({1, nb, 1}), scores)}, out), 0);
  EXPECT_EQ(out[0].as<int32_t>()[0], nb);
  EXPECT_EQ(out[1].as<float>()[3], 1.f);  // clipped
  EXPECT_EQ(out[2].as<float>()[0], scores[nb - 1]);
}

TEST(BatchedNmsPlugin, RefusesBadFields) {
  IPluginCreator& cr = builtinCreator("BatchedNMSDynamic_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet keep;
  keep.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{6});
  expectRefused(cr, keep);
  FieldSet bg;
  bg.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{5}).add("backgroundLabelId", int32_t{2});
  expectRefused(cr, bg);
  FieldSet type;
  type.add("numClasses", 2.5f).add("topK", int32_t{5}).add("keepTopK", int32_t{5});
  expectRefused(cr, type);
}

// NMS_TRT: center-size decoding against the priors and variances, then per-class NMS and [N, 1, K, 7] rows.
TEST(DetectionOutputPlugin, DecodesAndSuppresses) {
  for (char const* name : {"NMS_TRT", "NMSDynamic_TRT"}) {
    IPluginCreator& cr = builtinCreator(name);
    FieldSet f;
    f.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("backgroundLabelId", int32_t{0});
    f.add("confidenceThreshold", 0.1f).add("nmsThreshold", 0.5f).add("codeType", int32_t{1});
    f.add("inputOrder", std::vector<int32_t>{0, 2, 1});  // loc, priors, conf
    PluginPtr p = createPlugin(cr, f.get());
    ASSERT_TRUE(p) << name;
    // Three priors: two overlapping, one apart. loc shifts prior 2 right by 0.1 * 0.1 * width.
    std::vector<float> priors{0.1f, 0.1f, 0.3f, 0.3f, 0.12f, 0.1f, 0.32f, 0.3f, 0.6f, 0.6f, 0.9f, 0.9f};
    for (int i = 0; i < 3; ++i) priors.insert(priors.end(), {0.1f, 0.1f, 0.2f, 0.2f});
    std::vector<float> loc(12, 0.f);
    loc[8] = 0.1f;              // x centre of prior 2: + 0.1 * 0.1 * 0.3
    loc[10] = std::log(2.f) / 0.2f;  // width of prior 2 doubled
    std::vector<float> conf{0.9f, 0.8f, 0.2f, 0.7f, 0.3f, 0.05f};  // per prior: background, class 1
    std::vector<HostTensor> in{floats(dims({1, 12, 1, 1}), loc), floats(dims({1, 2, 12, 1}), priors),
                               floats(dims({1, 6, 1, 1}), conf)};
    auto out = expectRoundTrips(cr, *p, in);
    ASSERT_TRUE(sameDims(out[0].desc.dims, dims({1, 1, 3, 7})));
    ASSERT_EQ(out[1].as<int32_t>()[0], 1);  // prior 1 suppressed by prior 0; prior 2's 0.05 is below 0.1
    expectNear(out[0].as<float>(), {0, 1, 0.8f, 0.1f, 0.1f, 0.3f, 0.3f, 0, -1, 0, 0, 0, 0, 0, 0, -1, 0, 0, 0, 0, 0}, 1e-6f);
    // With class 1 of prior 2 above the threshold, its decoded (moved, widened, clipped) box appears.
    conf[5] = 0.5f;
    in[2] = floats(dims({1, 6, 1, 1}), conf);
    std::vector<HostTensor> o2;
    ASSERT_EQ(runHost(*p, in, o2), 0);
    ASSERT_EQ(o2[1].as<int32_t>()[0], 2);
    float ccx = 0.75f + 0.1f * 0.1f * 0.3f, ww = 0.3f * 2.f;
    expectNear(o2[0].as<float>() + 7, {0, 1, 0.5f, ccx - ww / 2, 0.6f, std::min(ccx + ww / 2, 1.f), 0.9f}, 1e-5f);
  }
}

TEST(DetectionOutputPlugin, RefusesBadFieldsAndShapes) {
  IPluginCreator& cr = builtinCreator("NMS_TRT");
  FieldSet none;
  expectRefused(cr, none);
  FieldSet order;
  order.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("inputOrder", std::vector<int32_t>{0, 0, 1});
  expectRefused(cr, order);
  FieldSet code;
  code.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3}).add("codeType", int32_t{4});
  expectRefused(cr, code);
  FieldSet ok;
  ok.add("numClasses", int32_t{2}).add("topK", int32_t{5}).add("keepTopK", int32_t{3});
  PluginPtr p = createPlugin(cr, ok.get());
  ASSERT_TRUE(p);
  std::vector<HostTensor> out;  // conf holds 3 classes per prior, not 2
  EXPECT_NE(runHost(*p, {floats(dims({1, 4, 1, 1}), std::vector<float>(4)), floats(dims({1, 3, 1, 1}), std::vector<float>(3)),
                         floats(dims({1, 2, 4, 1}), std::vector<float>(8))},
                    out),
            0);
}

}  // namespace
}  // namespace kiln::plugin::testing
