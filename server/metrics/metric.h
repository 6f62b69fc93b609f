// Metric values: Counter, Gauge, Histogram. Updates are lock-free atomics, so a hot path keeps a
// reference from Family::with() and pays only for the atomic operation.
#pragma once

#include <atomic>
#include <concepts>
#include <cstdint>
#include <memory>
#include <vector>

namespace osprey::server::metrics {

// Monotonically increasing. Integer increments are exact (a 64-bit count); fractional ones are
// kept apart in a double.
class Counter {
 public:
  void inc() { whole_.fetch_add(1, std::memory_order_relaxed); }
  // Any integer type (uint64_t included); n <= 0 is ignored (a counter never goes down).
  template <std::integral T>
  void inc(T n) {
    if (n > 0) whole_.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  }
  // v <= 0 or NaN is ignored.
  void inc(double v);
  double value() const;
  uint64_t whole() const { return whole_.load(std::memory_order_relaxed); }
  double fraction() const { return fraction_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> whole_{0};
  std::atomic<double> fraction_{0.0};
};

class Gauge {
 public:
  void set(double v) { value_.store(v, std::memory_order_relaxed); }
  void add(double v);
  void sub(double v) { add(-v); }
  double value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0.0};
};

// Fixed upper bounds (strictly ascending, finite); an observation v lands in the first bucket
// with v <= bound, or in the implicit +Inf bucket.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);

  struct Snapshot {
    std::vector<double> bounds;
    std::vector<uint64_t> cumulative;  // bounds.size() + 1 entries; the last is +Inf == count
    double sum = 0;
    uint64_t count = 0;
  };
  // Count and buckets always agree (count is the +Inf bucket); sum may trail a concurrent
  // observe() by that one observation.
  Snapshot snapshot() const;
  const std::vector<double>& bounds() const { return bounds_; }

 private:
  std::vector<double> bounds_;
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
  std::atomic<double> sum_{0.0};
};

// Latency buckets for inference, in seconds: 50 µs ... 10 s.
const std::vector<double>& default_latency_buckets_seconds();

}  // namespace osprey::server::metrics
