// Timing statistics for kilnexec's performance summary.
#include "stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kilnexec {

Stats computeStats(std::vector<double> values, std::vector<double> const& percentiles) {
  Stats s;
  s.count = values.size();
  for (double p : percentiles) s.percentiles.emplace_back(p, 0.0);
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  size_t const n = values.size();
  s.min = values.front();
  s.max = values.back();
  for (double v : values) s.sum += v;
  s.mean = s.sum / static_cast<double>(n);
  s.median = n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  double sq = 0;
  for (double v : values) sq += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(sq / static_cast<double>(n));
  s.cvPercent = s.mean > 0 ? 100.0 * s.stddev / s.mean : 0.0;
  for (auto& [p, value] : s.percentiles) {
    double rank = std::ceil(p / 100.0 * static_cast<double>(n));
    size_t idx = rank < 1 ? 0 : std::min(n, static_cast<size_t>(rank)) - 1;
    value = values[idx];
  }
  return s;
}

std::string formatStats(Stats const& s) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "min = %.5g ms, max = %.5g ms, mean = %.5g ms, median = %.5g ms", s.min, s.max,
                s.mean, s.median);
  std::string line = buf;
  for (auto const& [p, v] : s.percentiles) {
    std::snprintf(buf, sizeof(buf), ", percentile(%g%%) = %.5g ms", p, v);
    line += buf;
  }
  return line;
}

}  // namespace kilnexec
