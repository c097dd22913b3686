// Timing statistics as trtexec reports them: min, max, mean, median, percentiles, coefficient of variation.
#pragma once

#include <string>
#include <vector>

namespace kilnexec {

/// Summary of a set of durations (milliseconds).
struct Stats {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, sum = 0;
  double stddev = 0;                                   ///< population standard deviation
  double cvPercent = 0;                                ///< stddev / mean * 100 (0 when mean is 0)
  std::vector<std::pair<double, double>> percentiles;  ///< (percentile, value)
};

/// Computes Stats of `values` for the given percentiles. Percentiles use the nearest-rank rule: the smallest
/// value with at least p% of the values at or below it. The median of an even count is the mean of the two
/// middle values. Empty input gives all zeros.
Stats computeStats(std::vector<double> values, std::vector<double> const& percentiles);

/// trtexec's line: "min = 1.2 ms, max = ..., mean = ..., median = ..., percentile(90%) = ... ms".
std::string formatStats(Stats const& s);

}  // namespace kilnexec
