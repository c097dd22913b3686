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
                                    int64_t limit) {
  std::stable_sort(c.begin(), c.end(), [](NmsCandidate const& a, NmsCandidate const& b) {
    return a.score > b.score || (a.score == b.score && a.id < b.id);
  });
  std::vector<NmsCandidate> kept;
  for (auto const& cand : c) {
    if (limit >= 0 && static_cast<int64_t>(kept.size()) >= limit) break;
    bool suppressed = false;
    for (auto const& k : kept) {
      if ((classAgnostic || k.cls == cand.cls) && boxIou(k.box, cand.box, offset) > iouThreshold) {
        suppressed = true;
        break;
      }
    }
    if (!suppressed) kept.push_back(cand);
  }
  return kept;
}

}  // namespace kiln::plugin
