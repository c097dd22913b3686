// Tests of the arena planner: reuse across disjoint lifetimes, no overlap among live buffers.
#include "builder/memory_planner.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln::builder {
namespace {

TEST(MemoryPlanner, ChainReusesMemory) {
  // a -> b -> c -> d: each buffer lives over two steps, so two slots suffice.
  std::vector<BufferRequest> r = {{1000, 0, 1}, {1000, 1, 2}, {1000, 2, 3}, {1000, 3, 4}};
  ArenaPlan p = planArena(r, 256);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 2 * 1024);
}

TEST(MemoryPlanner, AllLiveNeedSum) {
  std::vector<BufferRequest> r = {{100, 0, 5}, {300, 0, 5}, {200, 0, 5}};
  ArenaPlan p = planArena(r, 64);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 128 + 320 + 256);
  for (int64_t o : p.offsets) EXPECT_EQ(o % 64, 0);
}

TEST(MemoryPlanner, ZeroSizeAndEmpty) {
  EXPECT_EQ(planArena({}).size, 0);
  std::vector<BufferRequest> r = {{0, 0, 1}, {10, 0, 1}};
  ArenaPlan p = planArena(r);
  EXPECT_TRUE(arenaPlanIsValid(r, p));
  EXPECT_EQ(p.size, 256);
}

TEST(MemoryPlanner, RandomRequestsNeverOverlapWhileLive) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<BufferRequest> r;
    int n = 1 + static_cast<int>(rng() % 40);
    int64_t peakBound = 0;
    for (int i = 0; i < n; ++i) {
      int32_t a = static_cast<int32_t>(rng() % 30), b = a + static_cast<int32_t>(rng() % 6);
      r.push_back({static_cast<int64_t>(1 + rng() % 5000), a, b});
      peakBound += (r.back().size + 255) / 256 * 256;
    }
    ArenaPlan p = planArena(r);
    ASSERT_TRUE(arenaPlanIsValid(r, p)) << "trial " << trial;
    EXPECT_LE(p.size, peakBound);
  }
}

}  // namespace
}  // namespace kiln::builder
