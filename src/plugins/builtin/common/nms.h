// Greedy non-maximum suppression shared by the NMS plugins (host path): IoU of corner boxes and the
// score-ordered greedy selection.
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::plugin {

/// A box by its corners (either corner order is accepted: IoU uses the min/max of each pair).
struct CornerBox {
  float x1, y1, x2, y2;
};

/// Intersection over union; `offset` 1 adds one to widths and heights (unnormalized Caffe semantics).
/// 0 when the union is empty.
float boxIou(CornerBox const& a, CornerBox const& b, float offset);

/// One candidate of a greedy NMS: a score, its box, a class (candidates of different classes never suppress
/// each other unless `classAgnostic`) and an id the caller maps back.
struct NmsCandidate {
  float score;
  int32_t cls;
  int64_t id;
  CornerBox box;
};

/// Sorts `c` by descending score (ties: ascending id) and keeps, in that order, each candidate not suppressed by
/// a kept one of its class (any class when classAgnostic): suppression when IoU > iouThreshold, or >= with
/// `suppressAtThreshold` (EfficientNMS). Stops at `limit` kept (< 0: no limit).
std::vector<NmsCandidate> greedyNms(std::vector<NmsCandidate> c, float iouThreshold, float offset, bool classAgnostic,
                                    int64_t limit, bool suppressAtThreshold = false);

/// The per-class NMS of BatchedNMS_TRT and NMS_TRT for one image: for each class but `background`, the
/// candidates whose score passes the threshold (>= it, or > it when `strict`), the `topK` best of them
/// (score desc, box index asc), greedy NMS; then all survivors by score (ties: class, then box index) cut to
/// `keepTopK`. boxes: [nb][shareLocation ? 1 : nc][4]; scores: [nb][nc]. Candidate ids are class * nb + box.
std::vector<NmsCandidate> perClassNms(float const* boxes, float const* scores, int64_t nb, int64_t nc,
                                      bool shareLocation, int32_t background, int64_t topK, int64_t keepTopK,
                                      float scoreThreshold, bool strict, float iouThreshold, float offset);

}  // namespace kiln::plugin
