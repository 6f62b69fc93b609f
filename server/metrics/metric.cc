#include "metrics/metric.h"

#include <algorithm>
#include <cmath>

namespace osprey::server::metrics {
namespace {

void atomic_add(std::atomic<double>& a, double v) {
  double old = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(old, old + v, std::memory_order_relaxed)) {
  }
}

}  // namespace

void Counter::inc(double v) {
  if (!(v > 0)) return;  // negative, zero or NaN
  const double whole = std::floor(v);
  if (whole >= 1 && whole < 1.8e19) {
    inc(static_cast<uint64_t>(whole));
    v -= whole;
  }
  if (v > 0) atomic_add(fraction_, v);
}

double Counter::value() const {
  return static_cast<double>(whole()) + fraction();
}

void Gauge::add(double v) {
  atomic_add(value_, v);
}

Histogram::Histogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(std::make_unique<std::atomic<uint64_t>[]>(bounds_.size() + 1)) {}

void Histogram::observe(double v) {
  // First bound >= v; NaN compares false everywhere and lands in +Inf.
  const size_t i =
      static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin());
  buckets_[std::isnan(v) ? bounds_.size() : i].fetch_add(1, std::memory_order_relaxed);
  atomic_add(sum_, v);
}

Histogram::Snapshot Histogram::snapshot() const {
  Snapshot s;
  s.bounds = bounds_;
  s.sum = sum_.load(std::memory_order_relaxed);
  s.cumulative.resize(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    s.cumulative[i] = running;
  }
  s.count = running;
  return s;
}

const std::vector<double>& default_latency_buckets_seconds() {
  static const std::vector<double> kBuckets = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                               0.005,   0.01,   0.025,   0.05,   0.1,   0.25,
                                               0.5,     1,      2.5,     5,      10};
  return kBuckets;
}

}  // namespace osprey::server::metrics
