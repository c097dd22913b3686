// Tests of RPROI_TRT: hand-computed anchors, decoding, clipping, NMS, minimum size, padding and pooling; random
// inputs against a naive reference written here; refused fields (with the message naming the field) and shapes;
// round trips.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <mutex>
#include <string>

#include "plugins/builtin/common/plugin_common.h"
#include "plugins/builtin/common/plugin_gtest.h"

namespace kiln::plugin::testing {
namespace {

struct Cfg {
  int32_t poolingH = 2, poolingW = 2, featureStride = 16, preNmsTop = 100, nmsMaxOut = 4;
  float iou = 0.7f, minBoxSize = 0.f, spatialScale = 1.f / 16.f;
  std::vector<float> ratios{1.f}, scales{1.f};
  int64_t anchors() const { return static_cast<int64_t>(ratios.size() * scales.size()); }
};

FieldSet fieldsOf(Cfg const& c) {
  FieldSet f;
  f.add("poolingH", c.poolingH).add("poolingW", c.poolingW).add("featureStride", c.featureStride);
  f.add("preNmsTop", c.preNmsTop).add("nmsMaxOut", c.nmsMaxOut).add("iouThreshold", c.iou);
  f.add("minBoxSize", c.minBoxSize).add("spatialScale", c.spatialScale);
  f.add("anchorsRatioCount", static_cast<int32_t>(c.ratios.size())).add("anchorsRatios", c.ratios);
  f.add("anchorsScaleCount", static_cast<int32_t>(c.scales.size())).add("anchorsScales", c.scales);
  return f;
}

PluginPtr make(Cfg const& c) {
  FieldSet f = fieldsOf(c);
  return createPlugin(builtinCreator("RPROI_TRT"), f.get());
}

// Inputs of one run; fg(b, a, y, x) and delta(b, a, k, y, x) address the scores' foreground half and the deltas.
struct Case {
  int64_t n, a, h, w, c;
  std::vector<float> scores, deltas, fmap, info;
  Case(int64_t n_, int64_t a_, int64_t h_, int64_t w_, int64_t c_)
      : n(n_),
        a(a_),
        h(h_),
        w(w_),
        c(c_),
        scores(n * 2 * a * h * w, 0.f),
        deltas(n * 4 * a * h * w, 0.f),
        fmap(n * c * h * w, 0.f),
        info(n * 3, 0.f) {}
  size_t fgAt(int64_t b, int64_t k, int64_t y, int64_t x) const {
    return static_cast<size_t>(((b * 2 * a + a + k) * h + y) * w + x);
  }
  size_t deltaAt(int64_t b, int64_t k, int64_t q, int64_t y, int64_t x) const {
    return static_cast<size_t>(((b * 4 * a + 4 * k + q) * h + y) * w + x);
  }
  float& fg(int64_t b, int64_t k, int64_t y, int64_t x) { return scores[fgAt(b, k, y, x)]; }
  float& delta(int64_t b, int64_t k, int64_t q, int64_t y, int64_t x) { return deltas[deltaAt(b, k, q, y, x)]; }
  void image(int64_t b, float height, float width, float scale) {
    info[b * 3] = height;
    info[b * 3 + 1] = width;
    info[b * 3 + 2] = scale;
  }
  std::vector<HostTensor> tensors() const {
    return {floats(dims({n, 2 * a, h, w}), scores), floats(dims({n, 4 * a, h, w}), deltas),
            floats(dims({n, c, h, w}), fmap), floats(dims({n, 3}), info)};
  }
};

// Runs the plugin (and its round trips); returns rois and pooled features.
std::vector<HostTensor> run(Cfg const& cfg, Case const& cs) {
  PluginPtr p = make(cfg);
  EXPECT_TRUE(p);
  if (!p) return {};
  auto out = expectRoundTrips(builtinCreator("RPROI_TRT"), *p, cs.tensors());
  EXPECT_EQ(out.size(), 2u);
  return out;
}

void expectRois(HostTensor const& rois, int64_t image, std::vector<std::vector<float>> const& want, int32_t maxOut) {
  ASSERT_GE(rois.count(), (image + 1) * maxOut * 4);
  for (int32_t j = 0; j < maxOut; ++j) {
    float const* r = rois.as<float>() + (image * maxOut + j) * 4;
    std::vector<float> expect = j < static_cast<int32_t>(want.size()) ? want[j] : std::vector<float>{0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) EXPECT_NEAR(r[k], expect[k], 1e-4f) << "roi " << j << " coordinate " << k;
  }
}

TEST(RproiPlugin, AnchorsByHand) {
  // Stride 16, ratios 0.5/1/2, scales 1/2 on one cell, zero deltas: anchors centred at 7.5 of sizes
  // 23x12, 46x24 (ratio 0.5: round(sqrt(512)) = 23, round(11.5) = 12), 16x16, 32x32, 11x22, 22x44; clipped at 0.
  Cfg cfg;
  cfg.ratios = {0.5f, 1.f, 2.f};
  cfg.scales = {1.f, 2.f};
  cfg.iou = 1.f;
  cfg.nmsMaxOut = 6;
  Case cs(1, 6, 1, 1, 1);
  for (int k = 0; k < 6; ++k) cs.fg(0, k, 0, 0) = 0.1f * static_cast<float>(k + 1);  // best last
  cs.image(0, 1000.f, 1000.f, 1.f);
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(sameDims(out[0].desc.dims, dims({1, 1, 6, 4})));
  EXPECT_TRUE(sameDims(out[1].desc.dims, dims({1, 6, 1, 2, 2})));
  expectRois(out[0], 0,
             {{0.f, 0.f, 18.5f, 29.5f},   // anchor 5: 22 x 44
              {2.f, 0.f, 13.f, 18.5f},    // anchor 4: 11 x 22
              {0.f, 0.f, 23.5f, 23.5f},   // anchor 3: 32 x 32
              {0.f, 0.f, 15.5f, 15.5f},   // anchor 2: 16 x 16
              {0.f, 0.f, 30.5f, 19.5f},   // anchor 1: 46 x 24
              {0.f, 1.5f, 19.f, 13.5f}},  // anchor 0: 23 x 12
             6);
  // Ratio 1.5 at stride 4: width round(sqrt(16 / 1.5) = 3.27) = 3, height round(4.5) = 5 (half away from zero):
  // centred at 1.5 -> (0, -1, 3, 4), clipped to (0, 0, 3, 4).
  cfg.featureStride = 4;
  cfg.ratios = {1.5f};
  cfg.scales = {1.f};
  cfg.nmsMaxOut = 1;
  Case one(1, 1, 1, 1, 1);
  one.image(0, 100.f, 100.f, 1.f);
  out = run(cfg, one);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {{0.f, 0.f, 3.f, 4.f}}, 1);
}

TEST(RproiPlugin, DecodesDeltasAndClipsToTheImage) {
  // One 16x16 anchor, grid 1x2. Cell x = 1 (centre 23.5, 7.5) with dx 0.5, dy -0.25, dw ln 2: centre (31.5, 3.5),
  // size 32x16 -> (15.5, -4.5, 47.5, 11.5), clipped to the 40 x 10 image -> (15.5, 0, 39, 9).
  Cfg cfg;
  cfg.iou = 0.5f;
  cfg.nmsMaxOut = 3;
  Case cs(1, 1, 1, 2, 1);
  cs.fg(0, 0, 0, 0) = 0.8f;
  cs.fg(0, 0, 0, 1) = 0.9f;
  cs.delta(0, 0, 0, 0, 1) = 0.5f;
  cs.delta(0, 0, 1, 0, 1) = -0.25f;
  cs.delta(0, 0, 2, 0, 1) = std::log(2.f);
  cs.image(0, 10.f, 40.f, 1.f);
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {{15.5f, 0.f, 39.f, 9.f}, {0.f, 0.f, 15.5f, 9.f}}, 3);
}

// Three 8x8 anchors along x at stride 4 (centres 1.5, 5.5, 9.5), clipped at 0: boxes b0, b1, b2 with IoU
// 0.476 (b0, b1), 0.385 (b1, b2) and 0.069 (b0, b2).
Case threeBoxes(float s0, float s1, float s2) {
  Case cs(1, 1, 1, 3, 1);
  cs.fg(0, 0, 0, 0) = s0;
  cs.fg(0, 0, 0, 1) = s1;
  cs.fg(0, 0, 0, 2) = s2;
  cs.image(0, 100.f, 100.f, 1.f);
  return cs;
}

TEST(RproiPlugin, NmsSuppressesAboveTheThresholdOnly) {
  Cfg cfg;
  cfg.featureStride = 4;
  cfg.scales = {2.f};
  cfg.nmsMaxOut = 3;
  std::vector<float> b0{0.f, 0.f, 5.5f, 5.5f}, b1{1.5f, 0.f, 9.5f, 5.5f}, b2{5.5f, 0.f, 13.5f, 5.5f};
  ASSERT_NEAR(iouRef(b0.data(), b1.data(), 1), 32.5 / 68.25, 1e-9);
  ASSERT_NEAR(iouRef(b1.data(), b2.data(), 1), 32.5 / 84.5, 1e-9);
  ASSERT_NEAR(iouRef(b0.data(), b2.data(), 1), 6.5 / 94.25, 1e-9);
  struct Step {
    float iou, s0, s1, s2;
    std::vector<std::vector<float>> want;
  };
  for (Step const& st :
       std::vector<Step>{{0.35f, 0.5f, 0.9f, 0.7f, {b1}},         // the best (b1) suppresses both neighbours
                         {0.4f, 0.5f, 0.9f, 0.7f, {b1, b2}},      // 0.385 is not above 0.4
                         {0.5f, 0.5f, 0.9f, 0.7f, {b1, b2, b0}},  // nothing overlaps that much
                         {0.35f, 0.9f, 0.7f, 0.5f, {b0, b2}}}) {  // a suppressed box (b1) suppresses nothing
    cfg.iou = st.iou;
    auto out = run(cfg, threeBoxes(st.s0, st.s1, st.s2));
    ASSERT_EQ(out.size(), 2u);
    SCOPED_TRACE("iouThreshold " + std::to_string(st.iou));
    expectRois(out[0], 0, st.want, 3);
  }
  // Identical boxes (two equal anchors) have IoU 1: kept at threshold 1, suppressed below.
  cfg.scales = {2.f, 2.f};
  cfg.iou = 1.f;
  Case twins(1, 2, 1, 1, 1);
  twins.fg(0, 0, 0, 0) = 0.9f;
  twins.fg(0, 1, 0, 0) = 0.8f;
  twins.image(0, 100.f, 100.f, 1.f);
  auto out = run(cfg, twins);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {b0, b0}, 3);
  cfg.iou = 0.99f;
  out = run(cfg, twins);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {b0}, 3);
}

TEST(RproiPlugin, MinBoxSizeScalesWithTheImageAndDemotes) {
  // Stride 8, scales 1 and 2: boxes (0, 0, 7.5, 7.5) (8.5 wide with the +1) and (0, 0, 11.5, 11.5).
  Cfg cfg;
  cfg.featureStride = 8;
  cfg.scales = {1.f, 2.f};
  cfg.iou = 1.f;
  cfg.minBoxSize = 5.f;
  cfg.nmsMaxOut = 2;
  std::vector<float> small{0.f, 0.f, 7.5f, 7.5f}, large{0.f, 0.f, 11.5f, 11.5f};
  Case cs(2, 2, 1, 1, 1);
  for (int b = 0; b < 2; ++b) {
    cs.fg(b, 0, 0, 0) = 0.9f;
    cs.fg(b, 1, 0, 0) = 0.1f;
  }
  cs.image(0, 100.f, 100.f, 1.f);  // minimum 5: both pass, by score
  cs.image(1, 100.f, 100.f, 2.f);  // minimum 10: the small box ranks last but still fills a row
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {small, large}, 2);
  expectRois(out[0], 1, {large, small}, 2);
  cfg.nmsMaxOut = 1;
  out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 1, {large}, 1);
}

TEST(RproiPlugin, TiesKeepAnchorMajorOrder) {
  // Equal scores: proposals come in anchor index order a * H * W + y * W + x.
  Cfg cfg;
  cfg.featureStride = 4;
  cfg.scales = {1.f, 2.f};
  cfg.iou = 1.f;
  cfg.nmsMaxOut = 4;
  Case cs(1, 2, 1, 2, 1);
  cs.image(0, 100.f, 100.f, 1.f);
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  // 4x4 anchors at centres 1.5 / 5.5, then 8x8 ones.
  expectRois(out[0], 0,
             {{0.f, 0.f, 3.5f, 3.5f}, {3.5f, 0.f, 7.5f, 3.5f}, {0.f, 0.f, 5.5f, 5.5f}, {1.5f, 0.f, 9.5f, 5.5f}}, 4);
}

TEST(RproiPlugin, RoiPoolingByHandAndPadding) {
  // Stride 4, one 8x8 anchor; the best cell (y 1, x 2) gives (5.5, 1.5, 13.5, 9.5): on the map (scale 1/4)
  // columns round(1.375) = 1 .. round(3.375) = 3, rows 0 .. 2, so 3x3 cells in 2x2 bins of 1.5: rows [0, 2) and
  // [1, 3), columns [1, 3) and [2, 4). preNmsTop 1 leaves the second row as padding, pooled at cell (0, 0).
  Cfg cfg;
  cfg.featureStride = 4;
  cfg.scales = {2.f};
  cfg.spatialScale = 0.25f;
  cfg.preNmsTop = 1;
  cfg.nmsMaxOut = 2;
  Case cs(1, 1, 4, 6, 2);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      cs.fg(0, 0, y, x) = 0.01f * static_cast<float>(y * 6 + x);
      cs.fmap[y * 6 + x] = static_cast<float>(10 * y + x);
      cs.fmap[24 + y * 6 + x] = -static_cast<float>(10 * y + x) - 1.f;
    }
  }
  cs.fg(0, 0, 1, 2) = 1.f;
  cs.image(0, 16.f, 24.f, 1.f);
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {{5.5f, 1.5f, 13.5f, 9.5f}}, 2);
  ASSERT_TRUE(sameDims(out[1].desc.dims, dims({1, 2, 2, 2, 2})));
  expectNear(out[1].as<float>(),
             {12.f, 13.f, 22.f, 23.f, -2.f, -3.f, -12.f, -13.f, 0.f, 0.f, 0.f, 0.f, -1.f, -1.f, -1.f, -1.f}, 0.f);
}

TEST(RproiPlugin, BinsOffTheMapAreZero) {
  // A 60-wide image on a 2-cell grid (stride 4): dx 4 moves the box to x 29.5 .. 37.5, columns 7 .. 9 on the
  // map, all past its width 2: every bin is empty and gives 0 although the map is negative.
  Cfg cfg;
  cfg.featureStride = 4;
  cfg.scales = {2.f};
  cfg.spatialScale = 0.25f;
  cfg.preNmsTop = 1;
  cfg.nmsMaxOut = 1;
  Case cs(1, 1, 1, 2, 1);
  cs.fg(0, 0, 0, 0) = 1.f;
  cs.delta(0, 0, 0, 0, 0) = 4.f;
  cs.fmap = {-5.f, -6.f};
  cs.image(0, 40.f, 60.f, 1.f);
  auto out = run(cfg, cs);
  ASSERT_EQ(out.size(), 2u);
  expectRois(out[0], 0, {{29.5f, 0.f, 37.5f, 5.5f}}, 1);
  expectNear(out[1].as<float>(), {0.f, 0.f, 0.f, 0.f}, 0.f);
}

//
// Naive reference
//

// What a reference run went through, so that a test can insist its data exercises suppression, demotion, padding.
struct RefStats {
  int64_t suppressed = 0, small = 0, padded = 0;
};

struct RefBox {
  float v[4];
  float score;
  int64_t index;
};

RefStats reference(Cfg const& cfg, Case const& cs, std::vector<float>& rois, std::vector<float>& pooled) {
  RefStats st;
  int64_t maxOut = cfg.nmsMaxOut;
  rois.assign(static_cast<size_t>(cs.n * maxOut * 4), 0.f);
  pooled.assign(static_cast<size_t>(cs.n * maxOut * cs.c * cfg.poolingH * cfg.poolingW), 0.f);
  auto roundHalfUp = [](double v) { return std::floor(v + 0.5); };
  for (int64_t b = 0; b < cs.n; ++b) {
    std::vector<RefBox> all;
    for (size_t ri = 0; ri < cfg.ratios.size(); ++ri) {
      for (size_t si = 0; si < cfg.scales.size(); ++si) {
        int64_t k = static_cast<int64_t>(ri * cfg.scales.size() + si);
        double stride = cfg.featureStride;
        float aw = static_cast<float>(roundHalfUp(std::sqrt(stride * stride / cfg.ratios[ri])));
        float ah = static_cast<float>(roundHalfUp(aw * cfg.ratios[ri]));
        aw *= cfg.scales[si];
        ah *= cfg.scales[si];
        for (int64_t y = 0; y < cs.h; ++y) {
          for (int64_t x = 0; x < cs.w; ++x) {
            float cx = (static_cast<float>(cfg.featureStride) - 1.f) / 2.f + static_cast<float>(x * cfg.featureStride);
            float cy = (static_cast<float>(cfg.featureStride) - 1.f) / 2.f + static_cast<float>(y * cfg.featureStride);
            cx += cs.deltas[cs.deltaAt(b, k, 0, y, x)] * aw;
            cy += cs.deltas[cs.deltaAt(b, k, 1, y, x)] * ah;
            float bw = static_cast<float>(std::exp(static_cast<double>(cs.deltas[cs.deltaAt(b, k, 2, y, x)]))) * aw;
            float bh = static_cast<float>(std::exp(static_cast<double>(cs.deltas[cs.deltaAt(b, k, 3, y, x)]))) * ah;
            float maxX = cs.info[b * 3 + 1] - 1.f, maxY = cs.info[b * 3] - 1.f;
            RefBox r;
            float raw[4] = {cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2};
            for (int q = 0; q < 4; ++q) r.v[q] = std::min(std::max(raw[q], 0.f), q % 2 ? maxY : maxX);
            float minSize = cfg.minBoxSize * cs.info[b * 3 + 2];
            bool small = r.v[2] - r.v[0] + 1 < minSize || r.v[3] - r.v[1] + 1 < minSize;
            r.score = small ? -INFINITY : cs.scores[cs.fgAt(b, k, y, x)];
            st.small += small;
            r.index = (k * cs.h + y) * cs.w + x;
            all.push_back(r);
          }
        }
      }
    }
    std::stable_sort(all.begin(), all.end(), [](RefBox const& p, RefBox const& q) {
      return p.score > q.score || (p.score == q.score && p.index < q.index);
    });
    if (static_cast<int64_t>(all.size()) > cfg.preNmsTop) all.resize(static_cast<size_t>(cfg.preNmsTop));
    std::vector<RefBox> kept;
    for (auto const& cand : all) {
      if (static_cast<int64_t>(kept.size()) == maxOut) break;
      bool drop = false;
      for (auto const& k : kept) drop = drop || iouRef(k.v, cand.v, 1) > cfg.iou;
      if (!drop) kept.push_back(cand);
      st.suppressed += drop;
    }
    st.padded += maxOut - static_cast<int64_t>(kept.size());
    for (size_t j = 0; j < kept.size(); ++j) {
      for (int q = 0; q < 4; ++q) rois[(b * maxOut + j) * 4 + q] = kept[j].v[q];
    }
  }
  for (int64_t roi = 0; roi < cs.n * maxOut; ++roi) {
    int64_t b = roi / maxOut;
    float const* r = &rois[static_cast<size_t>(roi * 4)];
    int64_t c0[4];
    for (int q = 0; q < 4; ++q) c0[q] = static_cast<int64_t>(std::round(r[q] * cfg.spatialScale));
    int64_t rw = std::max<int64_t>(c0[2] - c0[0] + 1, 1), rh = std::max<int64_t>(c0[3] - c0[1] + 1, 1);
    for (int64_t ch = 0; ch < cs.c; ++ch) {
      for (int64_t i = 0; i < cfg.poolingH; ++i) {
        for (int64_t j = 0; j < cfg.poolingW; ++j) {
          float bh = static_cast<float>(rh) / static_cast<float>(cfg.poolingH);
          float bw = static_cast<float>(rw) / static_cast<float>(cfg.poolingW);
          int64_t y0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(i * bh)) + c0[1], 0, cs.h);
          int64_t y1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((i + 1) * bh)) + c0[1], 0, cs.h);
          int64_t x0 = std::clamp<int64_t>(static_cast<int64_t>(std::floor(j * bw)) + c0[0], 0, cs.w);
          int64_t x1 = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((j + 1) * bw)) + c0[0], 0, cs.w);
          float m = 0.f;
          bool any = false;
          for (int64_t y = y0; y < y1; ++y) {
            for (int64_t x = x0; x < x1; ++x) {
              float v = cs.fmap[static_cast<size_t>(((b * cs.c + ch) * cs.h + y) * cs.w + x)];
              m = any ? std::max(m, v) : v;
              any = true;
            }
          }
          pooled[static_cast<size_t>(((roi * cs.c + ch) * cfg.poolingH + i) * cfg.poolingW + j)] = m;
        }
      }
    }
  }
  return st;
}

RefStats checkAgainstReference(Cfg const& cfg, int64_t n, int64_t h, int64_t w, int64_t c, uint32_t seed) {
  int64_t a = cfg.anchors();
  Case cs(n, a, h, w, c);
  // Distinct scores (a shuffled ramp) so that the order does not hang on ties.
  std::vector<float> ramp = randomFloats(cs.scores.size(), seed);
  std::vector<size_t> idx(ramp.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t p, size_t q) { return ramp[p] < ramp[q]; });
  for (size_t i = 0; i < idx.size(); ++i)
    cs.scores[idx[i]] = (static_cast<float>(i) + 0.5f) / static_cast<float>(idx.size());
  cs.deltas = randomFloats(cs.deltas.size(), seed + 1, -0.6f, 0.6f);
  cs.fmap = randomFloats(cs.fmap.size(), seed + 2, -2.f, 2.f);
  std::vector<float> u = randomFloats(static_cast<size_t>(n * 3), seed + 3, 0.7f, 1.3f);
  for (int64_t b = 0; b < n; ++b) {
    cs.image(b, u[b * 3] * static_cast<float>(h * cfg.featureStride),
             u[b * 3 + 1] * static_cast<float>(w * cfg.featureStride), u[b * 3 + 2]);
  }
  std::vector<float> rois, pooled;
  RefStats st = reference(cfg, cs, rois, pooled);
  auto out = run(cfg, cs);
  EXPECT_EQ(out.size(), 2u);
  if (out.size() != 2) return st;
  EXPECT_TRUE(sameDims(out[0].desc.dims, dims({n, 1, cfg.nmsMaxOut, 4})));
  EXPECT_TRUE(sameDims(out[1].desc.dims, dims({n, cfg.nmsMaxOut, c, cfg.poolingH, cfg.poolingW})));
  expectNear(out[0].as<float>(), rois, 1e-5f);
  expectNear(out[1].as<float>(), pooled, 0.f);
  return st;
}

TEST(RproiPlugin, MatchesNaiveReference) {
  Cfg cfg;
  cfg.featureStride = 8;
  cfg.ratios = {0.5f, 1.f, 2.f};
  cfg.scales = {1.f, 2.f};
  cfg.preNmsTop = 50;
  cfg.nmsMaxOut = 20;
  cfg.iou = 0.6f;
  cfg.minBoxSize = 6.f;
  cfg.spatialScale = 0.125f;
  cfg.poolingH = 3;
  cfg.poolingW = 2;
  RefStats st = checkAgainstReference(cfg, 2, 5, 7, 3, 100);
  EXPECT_GT(st.suppressed, 0);
  EXPECT_GT(st.small, 0);
}

TEST(RproiPlugin, MatchesNaiveReferenceWithPaddingAndLargePreNmsTop) {
  // preNmsTop above A * H * W and a strict threshold: fewer boxes survive than nmsMaxOut, the rest is padding.
  Cfg cfg;
  cfg.featureStride = 4;
  cfg.ratios = {1.f, 2.f};
  cfg.scales = {1.f, 3.f};
  cfg.preNmsTop = 1000;
  cfg.nmsMaxOut = 30;
  cfg.iou = 0.3f;
  cfg.minBoxSize = 2.f;
  cfg.spatialScale = 0.25f;
  cfg.poolingH = 2;
  cfg.poolingW = 3;
  RefStats st = checkAgainstReference(cfg, 1, 3, 4, 2, 200);
  EXPECT_GT(st.padded, 0);
  EXPECT_GT(st.suppressed, 0);
}

//
// Shapes, formats, fields
//

TEST(RproiPlugin, ShapesAndFormats) {
  Cfg cfg;
  cfg.ratios = {0.5f, 1.f, 2.f};
  cfg.scales = {8.f, 16.f, 32.f};
  cfg.nmsMaxOut = 300;
  cfg.poolingH = cfg.poolingW = 7;
  PluginPtr p = make(cfg);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->getNbOutputs(), 2);
  std::vector<Dims> in{dims({2, 18, 38, 50}), dims({2, 36, 38, 50}), dims({2, 512, 38, 50}), dims({2, 3})};
  auto shapes = outputShapes(*p, in);
  EXPECT_TRUE(sameDims(shapes[0], dims({2, 1, 300, 4})));
  EXPECT_TRUE(sameDims(shapes[1], dims({2, 300, 512, 7, 7})));
  auto sym = symbolicOutputShapes(*p, in);
  EXPECT_TRUE(sameDims(sym[0], shapes[0]));
  EXPECT_TRUE(sameDims(sym[1], shapes[1]));
  DataType types[4] = {DataType::kFLOAT, DataType::kFLOAT, DataType::kHALF, DataType::kFLOAT};
  EXPECT_EQ(p->getOutputDataType(1, types, 4), DataType::kFLOAT);
  std::vector<PluginTensorDesc> io(6);
  for (auto& d : io) {
    d.type = DataType::kFLOAT;
    d.format = TensorFormat::kLINEAR;
  }
  for (int32_t pos = 0; pos < 6; ++pos) EXPECT_TRUE(p->supportsFormatCombination(pos, io.data(), 4, 2)) << pos;
  io[2].type = DataType::kHALF;
  EXPECT_FALSE(p->supportsFormatCombination(2, io.data(), 4, 2));
  io[2].type = DataType::kFLOAT;
  io[2].format = TensorFormat::kCHW4;
  EXPECT_FALSE(p->supportsFormatCombination(2, io.data(), 4, 2));
  EXPECT_FALSE(p->supportsFormatCombination(0, io.data(), 3, 2));
  EXPECT_STREQ(p->getPluginType(), "RPROI_TRT");
  EXPECT_STREQ(p->getPluginVersion(), "1");
}

TEST(RproiPlugin, AcceptsImInfoWithUnitDims) {
  Cfg cfg;
  PluginPtr p = make(cfg);
  ASSERT_TRUE(p);
  Case cs(1, 1, 2, 2, 1);
  cs.image(0, 32.f, 32.f, 1.f);
  auto t = cs.tensors();
  t[3] = floats(dims({1, 1, 1, 3}), cs.info);
  std::vector<HostTensor> out;
  EXPECT_EQ(runHost(*p, t, out), 0);
}

TEST(RproiPlugin, RefusesShapesThatDoNotFit) {
  Cfg cfg;
  cfg.scales = {1.f, 2.f};  // A = 2
  PluginPtr p = make(cfg);
  ASSERT_TRUE(p);
  Case cs(1, 2, 2, 3, 1);
  cs.image(0, 32.f, 48.f, 1.f);
  std::vector<HostTensor> out;
  ASSERT_EQ(runHost(*p, cs.tensors(), out), 0);
  auto bad = [&](int which, Dims d) {
    auto t = cs.tensors();
    t[static_cast<size_t>(which)] = HostTensor(d, DataType::kFLOAT);
    std::vector<HostTensor> o = out;
    EXPECT_NE(runHost(*p, t, o), 0) << "input " << which << " " << dimsString(d);
  };
  bad(0, dims({1, 2, 2, 3}));  // scores need 2A = 4 channels
  bad(1, dims({1, 4, 2, 3}));  // deltas need 4A = 8
  bad(1, dims({1, 8, 2, 2}));  // deltas on another grid
  bad(2, dims({1, 1, 3, 3}));  // feature map on another grid
  bad(2, dims({2, 1, 2, 3}));  // another batch
  bad(3, dims({1, 4}));        // im_info [N, 3]
  bad(3, dims({1, 2, 3}));
  bad(3, dims({3}));
}

// Collects the library's error messages while it lives.
class CaptureLog : public ILogger {
 public:
  CaptureLog() { setLibraryLogger(this); }
  ~CaptureLog() override { setLibraryLogger(nullptr); }
  void log(Severity, AsciiChar const* msg) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    text_ += msg;
    text_ += "\n";
  }
  std::string text() {
    std::lock_guard<std::mutex> lock(mutex_);
    return text_;
  }

 private:
  std::mutex mutex_;
  std::string text_;
};

// createPlugin must refuse `f`, logging a message that names the plugin and contains `what`.
void expectRefusedSaying(FieldSet& f, std::string const& what) {
  CaptureLog log;
  expectRefused(builtinCreator("RPROI_TRT"), f);
  std::string t = log.text();
  EXPECT_NE(t.find("RPROI_TRT"), std::string::npos) << t;
  EXPECT_NE(t.find(what), std::string::npos) << "expected '" << what << "' in: " << t;
}

TEST(RproiPlugin, RefusesBadFieldsNamingThem) {
  Cfg good;
  {
    FieldSet f = fieldsOf(good);
    PluginPtr p = createPlugin(builtinCreator("RPROI_TRT"), f.get());
    EXPECT_TRUE(p);
  }
  for (char const* name : {"poolingH", "poolingW", "featureStride", "preNmsTop", "nmsMaxOut", "iouThreshold",
                           "minBoxSize", "spatialScale", "anchorsRatios", "anchorsScales"}) {
    // The same fields with `name` left out.
    FieldSet full = fieldsOf(good);
    PluginFieldCollection const* fc = full.get();
    FieldSet f;
    for (int32_t i = 0; i < fc->nbFields; ++i) {
      PluginField const& pf = fc->fields[i];
      if (std::string(pf.name) != name) f.addRaw(pf.name, pf.type, pf.data, pf.length, 4);
    }
    expectRefusedSaying(f, std::string("field '") + name + "' is required");
  }
  auto with = [&](auto change, std::string const& what) {
    Cfg c = good;
    change(c);
    FieldSet f = fieldsOf(c);
    expectRefusedSaying(f, what);
  };
  with([](Cfg& c) { c.poolingH = 0; }, "poolingH must be positive");
  with([](Cfg& c) { c.poolingW = -1; }, "poolingW must be positive");
  with([](Cfg& c) { c.featureStride = 0; }, "featureStride must be positive");
  with([](Cfg& c) { c.preNmsTop = 0; }, "preNmsTop must be positive");
  with([](Cfg& c) { c.nmsMaxOut = 0; }, "nmsMaxOut must be positive");
  with([](Cfg& c) { c.iou = 1.5f; }, "iouThreshold must be in [0, 1]");
  with([](Cfg& c) { c.iou = NAN; }, "iouThreshold");
  with([](Cfg& c) { c.minBoxSize = -1.f; }, "minBoxSize must be finite and >= 0");
  with([](Cfg& c) { c.spatialScale = 0.f; }, "spatialScale must be finite and positive");
  with([](Cfg& c) { c.ratios = {1.f, -2.f}; }, "anchorsRatios[1] must be finite and positive");
  with([](Cfg& c) { c.scales = {INFINITY}; }, "anchorsScales[0] must be finite and positive");
  with([](Cfg& c) { c.ratios = {}; }, "anchorsRatioCount must be positive");
  // Counts that disagree with the lists.
  {
    FieldSet f;
    f.add("poolingH", int32_t{2}).add("poolingW", int32_t{2}).add("featureStride", int32_t{16});
    f.add("preNmsTop", int32_t{10}).add("nmsMaxOut", int32_t{4}).add("iouThreshold", 0.7f).add("minBoxSize", 16.f);
    f.add("spatialScale", 0.0625f).add("anchorsRatioCount", int32_t{3}).add("anchorsScaleCount", int32_t{1});
    f.add("anchorsRatios", std::vector<float>{0.5f, 1.f}).add("anchorsScales", std::vector<float>{8.f});
    expectRefusedSaying(f, "anchorsRatios holds 2 value(s) but anchorsRatioCount is 3");
  }
  {
    FieldSet f;
    f.add("poolingH", 2.5f);  // not an integer
    expectRefusedSaying(f, "poolingH");
  }
  // The counts may be left out: the lists say how many.
  {
    FieldSet f;
    f.add("poolingH", int32_t{2}).add("poolingW", int32_t{2}).add("featureStride", int32_t{16});
    f.add("preNmsTop", int32_t{10}).add("nmsMaxOut", int32_t{4}).add("iouThreshold", 0.7f).add("minBoxSize", 16.f);
    f.add("spatialScale", 0.0625f);
    f.add("anchorsRatios", std::vector<float>{0.5f, 1.f}).add("anchorsScales", std::vector<float>{8.f, 16.f});
    PluginPtr p = createPlugin(builtinCreator("RPROI_TRT"), f.get());
    ASSERT_TRUE(p);
    std::vector<Dims> in{dims({1, 8, 2, 2}), dims({1, 16, 2, 2}), dims({1, 3, 2, 2}), dims({1, 3})};
    EXPECT_TRUE(sameDims(outputShapes(*p, in)[1], dims({1, 4, 3, 2, 2})));
  }
}

TEST(RproiPlugin, DeserializeRefusesBadBytes) {
  Cfg cfg;
  PluginPtr p = make(cfg);
  ASSERT_TRUE(p);
  std::vector<char> bytes = serialized(*p);
  IPluginCreator& cr = builtinCreator("RPROI_TRT");
  PluginPtr back = reserialize(cr, *p);
  ASSERT_TRUE(back);
  EXPECT_EQ(serialized(*back), bytes);
  std::vector<char> zeroPool = bytes;
  std::fill(zeroPool.begin(), zeroPool.begin() + 4, 0);  // poolingH = 0
  IPluginV2* q = cr.deserializePlugin("bad", zeroPool.data(), zeroPool.size());
  EXPECT_EQ(q, nullptr);
  if (q) q->destroy();
  std::vector<char> longer = bytes;
  longer.push_back(0);
  q = cr.deserializePlugin("bad", longer.data(), longer.size());
  EXPECT_EQ(q, nullptr);
  if (q) q->destroy();
}

}  // namespace
}  // namespace kiln::plugin::testing
