// Latency statistics for `osprey bench`.
//
// Percentile definition (the only one used in osprey): linear interpolation between closest
// ranks, i.e. numpy.percentile's default ("linear", Hyndman & Fan type 7). For n sorted samples
// x[0..n-1] and p in [0, 100]:  h = (n - 1) * p / 100,  P = x[floor(h)] + (h - floor(h)) *
// (x[floor(h) + 1] - x[floor(h)]). So p0 is the minimum, p100 the maximum, p50 the median.
// The standard deviation is the sample standard deviation (divisor n - 1; 0 for one sample).
#pragma once

#include <cstddef>
#include <vector>

namespace osprey::cli {

// p-th percentile (0..100, clamped) of already-sorted samples; NaN when empty.
double percentile_sorted(const std::vector<double>& sorted, double p);

struct LatencySummary {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, stdev = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// Summary of samples in any order. All fields are 0 when `samples` is empty.
LatencySummary summarize(std::vector<double> samples);

}  // namespace osprey::cli
