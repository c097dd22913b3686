// softmax_onednn, normalization_onednn_layer, reduce_onednn and shuffle_onednn_reorder against the reference:
// every softmax axis (negative, default), layer norm over the last axis (BERT's shape, odd sizes, broadcast
// scale/bias ranks, the fused residual), reductions over one / several / all axes with and without kept dims, transposes and
// reshapes in every Shuffle form; refusals of what stays on the reference.
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr double kTol = 1e-5;

TEST(OnednnSoftmax, EveryAxis) {
  for (int64_t axis : {0, 1, 2, 3, -1}) {
    EXPECT_LT(compareWithReference("softmax_onednn", OpType::kSoftMax, attrs({{"axis", axis}}),
                                   {var(randomTensor({2, 3, 5, 7}, 3))}, 2),
              kTol)
        << axis;
  }
  EXPECT_LT(compareWithReference("softmax_onednn", OpType::kSoftMax, attrs({{"axis", int64_t{3}}}),
                                 {var(randomTensor({1, 12, 128, 128}, 4))}, 2),
            kTol);
  // No axis attribute: TensorRT's default.
  EXPECT_LT(compareWithReference("softmax_onednn", OpType::kSoftMax, ir::Attributes{}, {var(randomTensor({2, 4, 3, 5}, 5))}),
            kTol);
}

ir::Attributes normAttrs(V axes, int64_t groups = 1) {
  ir::Attributes a;
  a.set("axes", axes);
  a.set("epsilon", 1e-5);
  a.set("num_groups", groups);
  return a;
}

TEST(OnednnLayerNorm, LastAxis) {
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({2}),
                                 {var(randomTensor({1, 128, 768}, 1)), cst(randomTensor({768}, 2)),
                                  cst(randomTensor({768}, 3))},
                                 2),
            kTol);
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({-1}),
                                 {var(randomTensor({3, 5, 7, 13}, 1)), var(randomTensor({1, 1, 1, 13}, 2)),
                                  var(randomTensor({13}, 3))}),
            kTol);
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({1}),
                                 {var(randomTensor({1, 9}, 1)), var(randomTensor({9}, 2)), var(randomTensor({9}, 3))}),
            kTol);
  // The fused residual (x + residual normalized; y written with the sum first, then normalized in place).
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({2}),
                                 {var(randomTensor({2, 64, 768}, 1)), cst(randomTensor({768}, 2)),
                                  cst(randomTensor({768}, 3)), var(randomTensor({2, 64, 768}, 4))},
                                 2),
            kTol);
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({-1}),
                                 {var(randomTensor({3, 5, 13}, 5)), var(randomTensor({13}, 6)),
                                  var(randomTensor({13}, 7)), var(randomTensor({3, 5, 13}, 8))}),
            kTol);
  // A residual broadcast over the leading dim (a position embedding).
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({-1}),
                                 {var(randomTensor({3, 5, 13}, 9)), var(randomTensor({13}, 10)),
                                  var(randomTensor({13}, 11)), var(randomTensor({1, 5, 13}, 12))}),
            kTol);
  // A residual sum in chunks on two threads, a broadcast residual whose runs (75000) cross the 16384-element chunks.
  EXPECT_LT(compareWithReference("normalization_onednn_layer", OpType::kNormalization, normAttrs({-1}),
                                 {var(randomTensor({4, 300, 250}, 13)), var(randomTensor({250}, 14)),
                                  var(randomTensor({250}, 15)), var(randomTensor({1, 300, 250}, 16))},
                                 2),
            kTol);
  // Other axes, groups and per-element scales stay on the reference.
  auto supports = [](ir::Attributes const& a, V x, V s) {
    return tacticSupports("normalization_onednn_layer",
                          makeNode(OpType::kNormalization, a,
                                   {var(randomTensor(x, 1)), var(randomTensor(s, 2)), var(randomTensor(s, 3))}));
  };
  EXPECT_FALSE(supports(normAttrs({1, 2}), {2, 4, 6}, {6}));
  EXPECT_FALSE(supports(normAttrs({1}), {2, 4, 6}, {1, 4, 1}));
  EXPECT_FALSE(supports(normAttrs({2}), {2, 4, 6}, {2, 4, 6}));
  EXPECT_FALSE(supports(normAttrs({2, 3}, 2), {2, 4, 6, 6}, {1, 2, 1, 1}));
  EXPECT_FALSE(supports(normAttrs({0}), {9}, {9}));  // rank 1: oneDNN normalizes rows
}

TEST(OnednnReduce, AxesAndOps) {
  for (ReduceOperation op : {ReduceOperation::kSUM, ReduceOperation::kAVG, ReduceOperation::kMAX, ReduceOperation::kMIN,
                             ReduceOperation::kPROD}) {
    for (V axes : {V{2, 3}, V{1}, V{-1}, V{0, 1, 2, 3}}) {
      for (int64_t keep : {0, 1}) {
        ir::Attributes a;
        a.set("op", static_cast<int64_t>(op));
        a.set("axes", axes);
        a.set("keep_dims", keep);
        EXPECT_LT(compareWithReference("reduce_onednn", OpType::kReduce, a, {var(randomTensor({2, 6, 5, 7}, 9))}, 2),
                  kTol)
            << static_cast<int>(op) << " keep " << keep;
      }
    }
  }
  // x in a recorded format (a global pooling after a convolution); y plain. 7 x 9 rows fit one 64-row block of
  // the summing loop, 15 x 13 take four. The larger ones run on two threads: rows split among them (batch 1,
  // few blocks; 2 rows for 8 wanted splits; a single row), or whole items (batch 3).
  for (int64_t f : {1, 8, 16})
    for (ReduceOperation op : {ReduceOperation::kAVG, ReduceOperation::kSUM, ReduceOperation::kMAX, ReduceOperation::kMIN})
      for (V x : {V{2, 32, 7, 9}, V{1, 48, 15, 13}, V{1, 144, 56, 56}, V{3, 48, 23, 29}, V{1, 16384, 2, 1},
                  V{1, 40000, 1, 1}}) {
        ir::Attributes a;
        a.set("op", static_cast<int64_t>(op));
        a.set("axes", V{2, 3});
        a.set("keep_dims", int64_t{1});
        EXPECT_LT(compareWithReference("reduce_onednn", OpType::kReduce, a, {var(randomTensor(x, 9))}, 2, {f}, 0), kTol)
            << f << " op " << static_cast<int>(op) << " rows " << x[2] * x[3];
      }
  // Channels-last with C not a multiple of 16: the column sums' vector chunks and a scalar tail.
  for (ReduceOperation op : {ReduceOperation::kAVG, ReduceOperation::kMAX})
    for (V x : {V{2, 24, 9, 9}, V{1, 88, 61, 67}}) {
      ir::Attributes a;
      a.set("op", static_cast<int64_t>(op));
      a.set("axes", V{2, 3});
      a.set("keep_dims", int64_t{1});
      EXPECT_LT(compareWithReference("reduce_onednn", OpType::kReduce, a, {var(randomTensor(x, 9))}, 2, {1}, 0), kTol)
          << "op " << static_cast<int>(op) << " C " << x[1];
    }
  // The axes as an input (known at run time) stay on the reference.
  ir::Attributes a;
  a.set("op", int64_t{0});
  a.set("keep_dims", int64_t{1});
  HostTensor axes = HostTensor::fromVector(DataType::kINT64, makeDims({1}), std::vector<double>{1});
  EXPECT_FALSE(tacticSupports("reduce_onednn", makeNode(OpType::kReduce, a, {var(randomTensor({2, 3}, 1)), cst(axes)})));
}

TEST(OnednnShuffle, TransposesAndReshapes) {
  struct Case {
    V x;
    V first, reshape, second;
  };
  for (Case c : {Case{{1, 128, 768}, {}, {1, 128, 12, 64}, {0, 2, 1, 3}},  // attention heads
                 Case{{1, 12, 128, 64}, {0, 2, 1, 3}, {1, 128, 768}, {}},  // and back
                 Case{{2, 3, 4, 5}, {3, 1, 0, 2}, {}, {}}, Case{{2, 3, 4, 5}, {}, {6, 20}, {}},
                 Case{{2, 3, 4, 5}, {1, 0, 2, 3}, {3, 40}, {1, 0}}, Case{{7}, {}, {}, {}},
                 // Only unit axes move (MultiheadAttention's [B, S, E] <-> [S, B, E] at batch 1): one copy; and
                 // unit axes moving around axes that do move.
                 Case{{1, 128, 64}, {1, 0, 2}, {}, {}}, Case{{128, 1, 64}, {}, {8, 16, 1, 64}, {2, 0, 1, 3}},
                 Case{{1, 3, 1, 5}, {3, 2, 1, 0}, {}, {}}, Case{{3, 1, 5}, {1, 0, 2}, {15}, {}},
                 Case{{1, 301, 200}, {1, 0, 2}, {}, {}}}) {  // copied in chunks on both threads
    ir::Attributes a;
    if (!c.first.empty())
      a.set("first_perm", c.first);
    if (!c.reshape.empty())
      a.set("reshape", c.reshape);
    if (!c.second.empty())
      a.set("second_perm", c.second);
    a.set("zero_is_placeholder", int64_t{0});
    EXPECT_LT(compareWithReference("shuffle_onednn_reorder", OpType::kShuffle, a, {var(randomTensor(c.x, 6))}, 2), 1e-12);
  }
}

}  // namespace
}  // namespace kiln
