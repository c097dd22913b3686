// Tests of NMS: hand-computed selections (ONNX's examples: IoU suppression, score threshold, flipped corners,
// center format, limits), per-class boxes, batches and classes, a naive greedy recomputation on random boxes,
// empty inputs, index types and bad input.
#include <algorithm>
#include <cmath>

#include "backends/reference/select_test_util.h"

namespace kiln {
namespace {

using namespace selecttest;
using ir::OpType;

ir::Attributes nmsAttrs(BoundingBoxFormat f = BoundingBoxFormat::kCORNER_PAIRS, int64_t limit = 5000,
                        DataType it = DataType::kINT32) {
  return attrs({{"box_format", static_cast<int64_t>(f)}, {"topk_box_limit", limit},
                {"indices_type", static_cast<int64_t>(it)}});
}

// ONNX's test boxes: six boxes, [1, 6, 4] corners, scores [1, 6, 1] in NMS's [B, N, C] layout.
std::vector<double> onnxBoxes() {
  return {0, 0, 1, 1, 0, 0.1, 1, 1.1, 0, -0.1, 1, 0.9, 0, 10, 1, 11, 0, 10.1, 1, 11.1, 0, 100, 1, 101};
}
std::vector<double> onnxScores() { return {0.9, 0.75, 0.6, 0.95, 0.5, 0.3}; }

RunResult runOnnx(std::vector<double> const& boxes, int64_t maxOut, double iou, std::optional<double> score,
                  BoundingBoxFormat f = BoundingBoxFormat::kCORNER_PAIRS, int64_t limit = 5000,
                  DataType it = DataType::kINT32) {
  std::vector<In> ins{var(tensor(DataType::kFLOAT, {1, 6, 4}, boxes)), var(tensor(DataType::kFLOAT, {1, 6, 1}, onnxScores())),
                      cst(scalar(DataType::kINT64, static_cast<double>(maxOut))), var(scalar(DataType::kFLOAT, iou))};
  if (score) ins.push_back(var(scalar(DataType::kFLOAT, *score)));
  return runNode(OpType::kNMS, nmsAttrs(f, limit, it), ins, 2);
}

Ints rowsOf(RunResult const& r) { return ints(r.out[0]); }

TEST(NMSReference, OnnxSuppressByIoU) {
  RunResult r = runOnnx(onnxBoxes(), 3, 0.5, 0.0);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(r.inferred[0].shape.d[0], -1);
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{3, 3}));
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  EXPECT_EQ(r.out[1].shape().nbDims, 0);
  EXPECT_EQ(ints(r.out[1]), (Ints{3}));
}

TEST(NMSReference, OnnxFlippedCornersAndCenterFormat) {
  std::vector<double> flipped{1, 1, 0, 0, 0, 0.1, 1, 1.1, 0, 0.9, 1, -0.1, 0, 10, 1, 11, 1, 10.1, 0, 11.1, 1, 101, 0, 100};
  RunResult r = runOnnx(flipped, 3, 0.5, 0.0);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0, 0, 0, 5}));
  std::vector<double> center{0.5, 0.5, 1, 1, 0.5, 0.6, 1, 1, 0.5, 0.4, 1, 1, 0.5, 10.5, 1, 1, 0.5, 10.6, 1, 1, 0.5, 100.5, 1, 1};
  r = runOnnx(center, 3, 0.5, 0.0, BoundingBoxFormat::kCENTER_SIZES);
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0, 0, 0, 5}));
}

TEST(NMSReference, OnnxLimitsAndThresholds) {
  RunResult r = runOnnx(onnxBoxes(), 2, 0.5, 0.0);  // max 2 per class
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0}));
  r = runOnnx(onnxBoxes(), 3, 0.5, 0.4);  // 0.3 is below the score threshold
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0}));
  r = runOnnx(onnxBoxes(), 0, 0.5, 0.0);  // nothing requested
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{0, 3}));
  EXPECT_EQ(ints(r.out[1]), (Ints{0}));
  r = runOnnx(onnxBoxes(), 10, 1.0, std::nullopt);  // IoU threshold 1: nothing suppressed, score order
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 4, 0, 0, 5}));
  r = runOnnx(onnxBoxes(), 10, 1.0, std::nullopt, BoundingBoxFormat::kCORNER_PAIRS, 2, DataType::kINT64);  // top-2 only
  ASSERT_TRUE(r.status.isOk());
  EXPECT_EQ(r.out[0].dtype(), DataType::kINT64);
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 3, 0, 0, 0}));
}

// Naive greedy NMS over (batch, class) with explicit IoU in float64.
Ints naiveNms(std::vector<double> const& boxes, std::vector<double> const& scores, int64_t B, int64_t N, int64_t C,
              int64_t maxOut, double iouT, double scoreT) {
  Ints rows;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t c = 0; c < C; ++c) {
      std::vector<bool> done(N, false);
      Ints kept;
      while (static_cast<int64_t>(kept.size()) < maxOut) {
        int64_t best = -1;
        for (int64_t i = 0; i < N; ++i) {
          double s = scores[(b * N + i) * C + c];
          if (done[i] || !(s > scoreT)) continue;
          if (best < 0 || s > scores[(b * N + best) * C + c]) best = i;
        }
        if (best < 0) break;
        done[best] = true;
        auto box = [&](int64_t i) { return &boxes[(b * N + i) * 4]; };
        bool ok = true;
        for (int64_t k : kept) {
          double const* p = box(best);
          double const* q = box(k);
          double iw = std::min(p[2], q[2]) - std::max(p[0], q[0]), ih = std::min(p[3], q[3]) - std::max(p[1], q[1]);
          double inter = iw > 0 && ih > 0 ? iw * ih : 0;
          double u = (p[2] - p[0]) * (p[3] - p[1]) + (q[2] - q[0]) * (q[3] - q[1]) - inter;
          if (u > 0 && inter / u > iouT) ok = false;
        }
        if (ok) {
          kept.push_back(best);
          rows.insert(rows.end(), {b, c, best});
        }
      }
    }
  return rows;
}

TEST(NMSReference, RandomBoxesAgainstNaive) {
  int64_t B = 2, N = 17, C = 3;
  std::vector<double> boxes, scores;
  uint32_t s = 12345;
  auto rnd = [&] {
    s = s * 1664525u + 1013904223u;
    return (s >> 8) / 16777216.0;
  };
  for (int64_t i = 0; i < B * N; ++i) {
    double x = std::floor(rnd() * 16) / 2, y = std::floor(rnd() * 16) / 2;
    boxes.insert(boxes.end(), {x, y, x + 1 + std::floor(rnd() * 8) / 2, y + 1 + std::floor(rnd() * 8) / 2});
  }
  for (int64_t i = 0; i < B * N * C; ++i) scores.push_back(std::floor(rnd() * 64) / 64);
  for (DataType t : {DataType::kFLOAT, DataType::kFLOAT64, DataType::kHALF}) {
    RunResult r = runNode(OpType::kNMS, nmsAttrs(),
                          {var(tensor(t, {B, N, 4}, boxes)), var(tensor(t, {B, N, C}, scores)),
                           var(scalar(DataType::kINT32, 5)), var(scalar(DataType::kFLOAT, 0.3)),
                           var(scalar(DataType::kFLOAT, 0.25))},
                          2);
    ASSERT_TRUE(r.status.isOk()) << r.status.toString();
    EXPECT_EQ(rowsOf(r), naiveNms(boxes, scores, B, N, C, 5, 0.3, 0.25)) << dataTypeName(t);
  }
}

TEST(NMSReference, PerClassBoxes) {
  // [1, 2, 2, 4]: class 0 boxes overlap completely, class 1 boxes do not.
  std::vector<double> boxes{0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 5, 5, 6, 6};
  std::vector<double> scores{0.9, 0.8, 0.7, 0.6};  // [1, 2, 2]: (box, class)
  RunResult r = runNode(OpType::kNMS, nmsAttrs(),
                        {var(tensor(DataType::kFLOAT, {1, 2, 2, 4}, boxes)), var(tensor(DataType::kFLOAT, {1, 2, 2}, scores)),
                         var(scalar(DataType::kINT64, 10)), var(scalar(DataType::kFLOAT, 0.5))},
                        2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(rowsOf(r), (Ints{0, 0, 0, 0, 1, 0, 0, 1, 1}));
}

TEST(NMSReference, EmptyAndBadInput) {
  RunResult r = runNode(OpType::kNMS, nmsAttrs(),
                        {var(tensor(DataType::kFLOAT, {1, 0, 4}, std::vector<double>{})),
                         var(tensor(DataType::kFLOAT, {1, 0, 2}, std::vector<double>{})), var(scalar(DataType::kINT64, 3))},
                        2);
  ASSERT_TRUE(r.status.isOk()) << r.status.toString();
  EXPECT_EQ(dimsToVector(r.out[0].shape()), (Ints{0, 3}));
  auto bad = [](HostTensor b, HostTensor s, DataType it = DataType::kINT32) {
    return runNode(OpType::kNMS, nmsAttrs(BoundingBoxFormat::kCORNER_PAIRS, 5000, it),
                   {var(std::move(b)), var(std::move(s)), var(scalar(DataType::kINT64, 3))}, 2)
        .status.isOk();
  };
  HostTensor b = tensor(DataType::kFLOAT, {1, 2, 4}, std::vector<double>(8, 0));
  HostTensor s = tensor(DataType::kFLOAT, {1, 2, 1}, std::vector<double>(2, 0));
  EXPECT_TRUE(bad(b, s));
  EXPECT_FALSE(bad(tensor(DataType::kFLOAT, {1, 2, 3}, std::vector<double>(6, 0)), s));  // last axis 3
  EXPECT_FALSE(bad(b, tensor(DataType::kFLOAT, {1, 3, 1}, std::vector<double>(3, 0))));  // N differs
  EXPECT_FALSE(bad(tensor(DataType::kINT32, {1, 2, 4}, std::vector<double>(8, 0)), s));  // int boxes
  EXPECT_FALSE(bad(b, s, DataType::kFLOAT));                                             // index type
}

}  // namespace
}  // namespace kiln
