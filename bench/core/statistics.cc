#include "core/statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace osprey::bench {

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return std::numeric_limits<double>::quiet_NaN();
  p = std::clamp(p, 0.0, 100.0);
  const double h = static_cast<double>(sorted.size() - 1) * p / 100.0;
  const auto lo = static_cast<size_t>(std::floor(h));
  if (lo + 1 >= sorted.size()) return sorted.back();
  const double frac = h - static_cast<double>(lo);
  return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

double percentile(std::vector<double> samples, double p) {
  std::sort(samples.begin(), samples.end());
  return percentile_sorted(samples, p);
}

Summary summarize(std::vector<double> samples) {
  Summary s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  double sum = 0;
  for (double v : samples) sum += v;
  s.mean = sum / static_cast<double>(samples.size());
  if (samples.size() > 1) {
    double ss = 0;
    for (double v : samples) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(samples.size() - 1));
  }
  s.p50 = percentile_sorted(samples, 50);
  s.p90 = percentile_sorted(samples, 90);
  s.p95 = percentile_sorted(samples, 95);
  s.p99 = percentile_sorted(samples, 99);
  return s;
}

std::vector<double> cdf_points(std::vector<double> samples, size_t points) {
  std::vector<double> out;
  if (samples.empty()) return out;
  points = std::max<size_t>(points, 2);
  std::sort(samples.begin(), samples.end());
  out.reserve(points);
  for (size_t i = 0; i < points; ++i)
    out.push_back(percentile_sorted(
        samples, 100.0 * static_cast<double>(i) / static_cast<double>(points - 1)));
  return out;
}

}  // namespace osprey::bench
