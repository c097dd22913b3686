// The shared pieces of the oneDNN tactics: the OpenMP thread count of a launch (set, then restored) and oneDNN's
// right padding for TensorRT's window geometries.
#include <gtest/gtest.h>
#include <omp.h>

#include "backends/cpu/onednn_util.h"

namespace kiln {
namespace {

using backends::cpu::OmpThreads;
using backends::cpu::rightPadding;

TEST(OnednnUtil, OmpThreadsFollowsThePoolAndRestoresTheCallersCount) {
  omp_set_num_threads(5);
  ThreadPool pool(3);
  {
    backends::LaunchContext ctx;
    ctx.pool = &pool;
    OmpThreads t(ctx);
    EXPECT_EQ(t.count(), 3);
    EXPECT_EQ(omp_get_max_threads(), 3);
  }
  EXPECT_EQ(omp_get_max_threads(), 5);
  {
    backends::LaunchContext none;
    OmpThreads t(none);
    EXPECT_EQ(t.count(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(omp_get_max_threads(), 5);
}

TEST(OnednnUtil, RightPadding) {
  // Rounding down: TensorRT's padEnd satisfies oneDNN's check (in 8, k 3, s 2: out 3).
  EXPECT_EQ(rightPadding(8, 3, 3, 2, 0, 0), 0);
  // Rounding up (in 7, k 3, s 2, pads 1/0: out 4) needs one more column on the right.
  EXPECT_EQ(rightPadding(7, 4, 3, 2, 1, 0), 1);
  // An output no padding can give.
  EXPECT_EQ(rightPadding(8, 1, 3, 1, 0, 0), -1);
}

}  // namespace
}  // namespace kiln
