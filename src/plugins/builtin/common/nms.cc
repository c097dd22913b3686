// Greedy non-maximum suppression shared by the NMS plugins.
#include "plugins/builtin/common/nms.h"

#include <algorithm>

namespace kiln::plugin {

float boxIou(CornerBox const& a, CornerBox const& b, float offset) {
  float ax1 = std::min(a.x1, a.x2), ax2 = std::max(a.x1, a.x2), ay1 = std::min(a.y1, a.y2), ay2 = std::max(a.y1, a.y2);
  float bx1 = std::min(b.x1, b.x2), bx2 = std::max(b.x1, b.x2), by1 = std::min(b.y1, b.y2), by2 = std::max(b.y1, b.y2);
  float iw = std::min(ax2, bx2) - std::max(ax1, bx1) + offset;
  float ih = std::min(ay2, by2) - std::max(ay1, by1) + offset;
  float inter = (iw > 0.f && ih > 0.f) ? iw * ih : 0.f;
  float areaA = (ax2 - ax1 + offset) * (ay2 - ay1 + offset);
  float areaB = (bx2 - bx1 + offset) * (by2 - by1 + offset);
  float uni = areaA + areaB - inter;
  return uni > 0.f ? inter / uni : 0.f;
}

std::vector<NmsCandidate> greedyNms(std::vector<NmsCandidate> c, float iouThreshold, float offset, bool classAgnostic,
                                    int64_t limit, bool suppressAtThreshold) {
  std::stable_sort(c.begin(), c.end(), [](NmsCandidate const& a, NmsCandidate const& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  });
  std::vector<NmsCandidate> kept;
  for (auto const& cand : c) {
    if (limit >= 0 && static_cast<int64_t>(kept.size()) >= limit) break;
    bool suppressed = false;
    for (auto const& k : kept) {
      float iou = (classAgnostic || k.cls == cand.cls) ? boxIou(k.box, cand.box, offset) : -1.f;
      if (iou > iouThreshold || (suppressAtThreshold && iou >= iouThreshold && iou >= 0.f)) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push_back(cand);
  }
  return kept;
}

std::vector<NmsCandidate> perClassNms(float const* boxes, float const* scores, int64_t nb, int64_t nc,
                                      bool shareLocation, int32_t background, int64_t topK, int64_t keepTopK,
                                      float scoreThreshold, bool strict, float iouThreshold, float offset) {
  auto byScore = [](NmsCandidate const& x, NmsCandidate const& y) {
    return x.score > y.score || (x.score == y.score && x.id < y.id);
  };
  int64_t lc = shareLocation ? 1 : nc;
  std::vector<NmsCandidate> all;
  for (int64_t c = 0; c < nc; ++c) {
    if (c == background) continue;
    std::vector<NmsCandidate> cand;
    for (int64_t i = 0; i < nb; ++i) {
      float s = scores[i * nc + c];
      if (strict ? !(s > scoreThreshold) : !(s >= scoreThreshold)) continue;
      float const* v = &boxes[(i * lc + (shareLocation ? 0 : c)) * 4];
      cand.push_back({s, static_cast<int32_t>(c), c * nb + i, {v[0], v[1], v[2], v[3]}});
    }
    std::stable_sort(cand.begin(), cand.end(), byScore);
    if (static_cast<int64_t>(cand.size()) > topK) cand.resize(static_cast<size_t>(topK));
    auto kept = greedyNms(std::move(cand), iouThreshold, offset, false, -1);
    all.insert(all.end(), kept.begin(), kept.end());
  }
  std::stable_sort(all.begin(), all.end(), byScore);
  if (static_cast<int64_t>(all.size()) > keepTopK) all.resize(static_cast<size_t>(keepTopK));
  return all;
}

}  // namespace kiln::plugin
