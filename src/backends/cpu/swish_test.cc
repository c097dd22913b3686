// swishInPlace against x * sigmoid(x) in double: lengths around the 16-wide vector and the 4096-element chunk, one
// and two threads, values over float's range, special values (NaN, infinities, zeros, denormals).
#include "backends/cpu/swish.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace kiln::backends::cpu {
namespace {

double exact(float v) { return static_cast<double>(v) / (1.0 + std::exp(-static_cast<double>(v))); }

TEST(CpuSwish, LengthsThreadsAndRange) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> wide(-100.f, 100.f), narrow(-6.f, 6.f);
  for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{4095}, int64_t{40000}})
    for (int threads : {1, 2}) {
      std::vector<float> x(static_cast<size_t>(n));
      for (size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? wide(rng) : narrow(rng);
      std::vector<float> y = x;
      swishInPlace(y.data(), n, threads);
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        double e = exact(x[i]);
        worst = std::max(worst, std::fabs(y[i] - e) / std::max(std::fabs(e), 1e-30));
      }
      EXPECT_LT(worst, 1e-6) << n << " " << threads;
    }
}

TEST(CpuSwish, SpecialValues) {
  float const inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x{nan, inf, -inf, 0.f, -0.f, 1e-40f, -1e-40f, 88.f, -88.f, -110.f, 200.f, -200.f};
  x.resize(20, 1.f);  // a partial vector after the first 16
  std::vector<float> y = x;
  swishInPlace(y.data(), static_cast<int64_t>(y.size()), 1);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], inf);
  EXPECT_TRUE(std::isnan(y[2]));  // -inf * sigmoid(-inf) = -inf * 0, as the reference gives it
  EXPECT_EQ(y[3], 0.f);
  EXPECT_EQ(y[4], 0.f);
  EXPECT_NEAR(y[5], 0.5e-40f, 1e-45f);
  EXPECT_NEAR(y[7], 88.f, 1e-5f);
  EXPECT_NEAR(y[8], exact(-88.f), 1e-40);
  EXPECT_EQ(y[9], 0.f);
  EXPECT_EQ(y[10], 200.f);
  EXPECT_EQ(y[11], 0.f);
  for (size_t i = 12; i < y.size(); ++i) EXPECT_NEAR(y[i], exact(1.f), 1e-6);
}

}  // namespace
}  // namespace kiln::backends::cpu
