// Greedy arena placement.
#include "builder/memory_planner.h"

#include <algorithm>
#include <numeric>

namespace kiln::builder {
namespace {
int64_t alignTo(int64_t v, int64_t a) { return (v + a - 1) / a * a; }
bool livesOverlap(BufferRequest const& a, BufferRequest const& b) { return a.first <= b.last && b.first <= a.last; }
}  // namespace

ArenaPlan planArena(std::vector<BufferRequest> const& requests, int64_t alignment) {
  ArenaPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].size != requests[b].size) return requests[a].size > requests[b].size;
    return requests[a].first < requests[b].first;
  });
  std::vector<size_t> placed;
  for (size_t idx : order) {
    BufferRequest const& r = requests[idx];
    if (r.size <= 0) continue;
    int64_t size = alignTo(r.size, alignment);
    // Occupied intervals of live-overlapping buffers, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t p : placed)
      if (livesOverlap(requests[p], r)) busy.push_back({plan.offsets[p], plan.offsets[p] + alignTo(requests[p].size, alignment)});
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the buffer; else after the last busy interval.
    int64_t bestOffset = -1, bestGap = 0, cursor = 0;
    for (auto const& [b, e] : busy) {
      if (b > cursor) {
        int64_t gap = b - cursor;
        if (gap >= size && (bestOffset < 0 || gap < bestGap)) {
          bestOffset = cursor;
          bestGap = gap;
        }
      }
      cursor = std::max(cursor, e);
    }
    if (bestOffset < 0) bestOffset = cursor;
    plan.offsets[idx] = bestOffset;
    plan.size = std::max(plan.size, bestOffset + size);
    placed.push_back(idx);
  }
  return plan;
}

bool arenaPlanIsValid(std::vector<BufferRequest> const& requests, ArenaPlan const& plan) {
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].size <= 0) continue;
    if (plan.offsets[i] < 0 || plan.offsets[i] + requests[i].size > plan.size) return false;
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (requests[j].size <= 0 || !livesOverlap(requests[i], requests[j])) continue;
      int64_t a0 = plan.offsets[i], a1 = a0 + requests[i].size, b0 = plan.offsets[j], b1 = b0 + requests[j].size;
      if (a0 < b1 && b0 < a1) return false;
    }
  }
  return true;
}

}  // namespace kiln::builder
