// pooling_onednn_direct against the reference pooling: max and average (counting or excluding padding), strides,
// asymmetric pads, padding modes, 3-D; refusals where oneDNN's answer would differ (blend, empty windows, average
// counting padding with a rounded-up output).
#include <gtest/gtest.h>

#include "backends/cpu/cpu_test_util.h"

namespace kiln {
namespace {

using namespace cputest;  // NOLINT: test helpers
using V = std::vector<int64_t>;

constexpr char kTactic[] = "pooling_onednn_direct";
constexpr double kTol = 1e-5;

struct Case {
  V x{}, window{};
  V strides{}, padsBegin{}, padsEnd{};
  PoolingType type = PoolingType::kMAX;
  bool excludePadding = true;
  PaddingMode mode = PaddingMode::kEXPLICIT_ROUND_DOWN;
};

ir::Attributes poolAttrs(Case const& c) {
  ir::Attributes a;
  size_t ns = c.window.size();
  a.set("type", static_cast<int64_t>(c.type));
  a.set("window", c.window);
  a.set("strides", c.strides.empty() ? V(ns, 1) : c.strides);
  a.set("pads_begin", c.padsBegin.empty() ? V(ns, 0) : c.padsBegin);
  a.set("pads_end", c.padsEnd.empty() ? V(ns, 0) : c.padsEnd);
  a.set("padding_mode", static_cast<int64_t>(c.mode));
  a.set("exclude_padding", static_cast<int64_t>(c.excludePadding));
  a.set("blend_factor", 0.0);
  return a;
}

double run(Case const& c, int threads = 1) {
  return compareWithReference(kTactic, OpType::kPooling, poolAttrs(c), {var(randomTensor(c.x, 41))}, threads);
}

// x and y in one recorded format (blocked or channels-last, as between oneDNN convolutions).
TEST(OnednnPooling, RecordedActivationFormats) {
  for (int64_t f : {1, 8, 16})
    for (PoolingType t : {PoolingType::kMAX, PoolingType::kAVERAGE}) {
      Case c{.x = {2, 32, 15, 13}, .window = {3, 3}, .strides = {2, 2}, .padsBegin = {1, 1}, .padsEnd = {1, 1},
             .type = t};
      EXPECT_LT(compareWithReference(kTactic, OpType::kPooling, poolAttrs(c), {var(randomTensor(c.x, 42))}, 2, {f}, f),
                kTol)
          << f;
    }
  // x and y in different formats are refused.
  Case c{.x = {1, 16, 8, 8}, .window = {2, 2}, .strides = {2, 2}};
  OneNode n = makeNode(OpType::kPooling, poolAttrs(c), {var(randomTensor(c.x, 43))});
  n.node->attrs.setInts("cpu_formats_in", {16});
  n.node->attrs.setInts("cpu_formats_out", {0});
  EXPECT_FALSE(backends::TacticRegistry::instance().find(kTactic)->create(*n.node).isOk());
}

TEST(OnednnPooling, MaxAndAverage) {
  for (PoolingType t : {PoolingType::kMAX, PoolingType::kAVERAGE}) {
    for (bool exclude : {true, false}) {
      // ResNet's stem pooling, odd sizes with asymmetric pads, a global average, batch and threads.
      EXPECT_LT(run({.x = {1, 8, 16, 16}, .window = {3, 3}, .strides = {2, 2}, .padsBegin = {1, 1}, .padsEnd = {1, 1},
                     .type = t, .excludePadding = exclude}),
                kTol);
      EXPECT_LT(run({.x = {3, 5, 9, 7}, .window = {2, 3}, .strides = {1, 2}, .padsBegin = {1, 0}, .padsEnd = {0, 2},
                     .type = t, .excludePadding = exclude},
                    2),
                kTol);
      EXPECT_LT(run({.x = {2, 4, 7, 7}, .window = {7, 7}, .type = t, .excludePadding = exclude}), kTol);
      EXPECT_LT(run({.x = {1, 3, 5, 6, 7}, .window = {2, 3, 2}, .strides = {2, 1, 2}, .padsBegin = {0, 1, 1},
                     .padsEnd = {1, 1, 0}, .type = t, .excludePadding = exclude}),
                kTol);
    }
  }
}

TEST(OnednnPooling, PaddingModes) {
  for (PaddingMode m : {PaddingMode::kEXPLICIT_ROUND_UP, PaddingMode::kSAME_UPPER, PaddingMode::kSAME_LOWER}) {
    EXPECT_LT(run({.x = {1, 2, 8, 7}, .window = {3, 3}, .strides = {2, 2}, .mode = m}), kTol);
    EXPECT_LT(run({.x = {1, 2, 8, 7}, .window = {3, 3}, .strides = {2, 2}, .type = PoolingType::kAVERAGE, .mode = m}),
              kTol);
  }
}

TEST(OnednnPooling, RefusesWhereOnednnWouldDiffer) {
  Case blend{.x = {1, 2, 6, 6}, .window = {2, 2}, .type = PoolingType::kMAX_AVERAGE_BLEND};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kPooling, poolAttrs(blend), {var(randomTensor(blend.x, 1))})));
  // Counting padding with a rounded-up output: the reference does not count the overhang.
  Case up{.x = {1, 2, 8, 8}, .window = {3, 3}, .strides = {2, 2}, .type = PoolingType::kAVERAGE,
          .excludePadding = false, .mode = PaddingMode::kEXPLICIT_ROUND_UP};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kPooling, poolAttrs(up), {var(randomTensor(up.x, 1))})));
  // A last window beyond the input (rounding up with a stride longer than the window): the reference gives 0.
  Case pad{.x = {1, 2, 5, 5}, .window = {1, 1}, .strides = {3, 3}, .mode = PaddingMode::kEXPLICIT_ROUND_UP};
  EXPECT_FALSE(tacticSupports(kTactic, makeNode(OpType::kPooling, poolAttrs(pad), {var(randomTensor(pad.x, 1))})));
}

}  // namespace
}  // namespace kiln
