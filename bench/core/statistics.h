// Latency statistics for the benchmark.
//
// Percentiles use linear interpolation between closest ranks (numpy.percentile's default,
// Hyndman & Fan type 7): for n sorted samples and p in [0, 100], h = (n - 1) * p / 100 and
// P = x[floor(h)] + (h - floor(h)) * (x[floor(h) + 1] - x[floor(h)]). p0 is the minimum, p100
// the maximum. The standard deviation is the sample one (divisor n - 1; 0 for one sample).
#pragma once

#include <cstddef>
#include <vector>

namespace osprey::bench {

// p-th percentile (clamped to 0..100) of already-sorted samples; NaN when empty.
double percentile_sorted(const std::vector<double>& sorted, double p);
// p-th percentile of samples in any order; NaN when empty.
double percentile(std::vector<double> samples, double p);

struct Summary {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, stdev = 0;
  double p50 = 0, p90 = 0, p95 = 0, p99 = 0;
};

// Summary of samples in any order; all fields 0 when empty.
Summary summarize(std::vector<double> samples);

// A downsampled empirical CDF: `points` (>= 2) values at evenly spaced percentiles
// 0, 100/(points-1), ..., 100. Empty when `samples` is empty.
std::vector<double> cdf_points(std::vector<double> samples, size_t points);

}  // namespace osprey::bench
