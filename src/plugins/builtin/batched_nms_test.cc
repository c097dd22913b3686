// Tests of BatchedNMSDynamic_TRT and BatchedNMS_TRT against reference math written in the test (and the checks every built-in gets:
// round trips, bad fields refused).
#include <algorithm>
#include <cmath>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

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

}  // namespace
}  // namespace kiln::plugin::testing
