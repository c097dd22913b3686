// Tests of kilnexec's timing statistics against values worked out by hand.
#include "stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kilnexec {
namespace {

TEST(Stats, TenValues) {
  // 1..10 shuffled: mean 5.5, median (5 + 6) / 2, population variance 8.25.
  Stats s = computeStats({7, 3, 10, 1, 5, 9, 2, 8, 4, 6}, {50, 90, 95, 99, 100, 0});
  EXPECT_EQ(s.count, 10u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_DOUBLE_EQ(s.sum, 55);
  EXPECT_NEAR(s.stddev, std::sqrt(8.25), 1e-12);
  EXPECT_NEAR(s.cvPercent, 100.0 * std::sqrt(8.25) / 5.5, 1e-9);
  // Nearest rank: ceil(p/100 * 10)-th smallest.
  ASSERT_EQ(s.percentiles.size(), 6u);
  EXPECT_EQ(s.percentiles[0].second, 5);   // 50%: 5th
  EXPECT_EQ(s.percentiles[1].second, 9);   // 90%: 9th
  EXPECT_EQ(s.percentiles[2].second, 10);  // 95%: ceil(9.5) = 10th
  EXPECT_EQ(s.percentiles[3].second, 10);
  EXPECT_EQ(s.percentiles[4].second, 10);
  EXPECT_EQ(s.percentiles[5].second, 1);  // 0%: the minimum
}

TEST(Stats, OddCountAndEmpty) {
  Stats s = computeStats({2, 8, 4}, {});
  EXPECT_EQ(s.median, 4);
  EXPECT_DOUBLE_EQ(s.mean, 14.0 / 3);
  Stats e = computeStats({}, {90});
  EXPECT_EQ(e.count, 0u);
  EXPECT_EQ(e.mean, 0);
  EXPECT_EQ(e.cvPercent, 0);
  ASSERT_EQ(e.percentiles.size(), 1u);
}

TEST(Stats, FormatsLikeTrtexec) {
  Stats s = computeStats({1, 2, 3, 4}, {90});
  EXPECT_EQ(formatStats(s), "min = 1 ms, max = 4 ms, mean = 2.5 ms, median = 2.5 ms, percentile(90%) = 4 ms");
}

}  // namespace
}  // namespace kilnexec
