#include "metrics/metric.h"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>
#include <vector>

namespace osprey::server::metrics {
namespace {

TEST(Counter, CountsIntegersExactlyAndKeepsFractions) {
  Counter c;
  c.inc();
  c.inc(4);
  c.inc(uint64_t{5});
  EXPECT_EQ(c.whole(), 10u);
  c.inc(2.25);
  EXPECT_EQ(c.whole(), 12u);
  EXPECT_DOUBLE_EQ(c.fraction(), 0.25);
  EXPECT_DOUBLE_EQ(c.value(), 12.25);
  c.inc(-3);
  c.inc(-1.5);
  c.inc(std::nan(""));
  EXPECT_DOUBLE_EQ(c.value(), 12.25) << "a counter never goes down";
}

TEST(Gauge, SetAddSub) {
  Gauge g;
  g.set(3.5);
  g.add(1.5);
  g.sub(7);
  EXPECT_DOUBLE_EQ(g.value(), -2);
}

TEST(Histogram, BucketsAreCumulativeAndUpperBoundsInclusive) {
  Histogram h({1, 2, 5});
  for (double v : {0.5, 1.0, 1.5, 5.0, 7.0, -3.0}) h.observe(v);
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{3, 4, 5, 6}));  // le 1, 2, 5, +Inf
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.sum, 12.0);
}

TEST(Histogram, NanLandsInTheInfBucketOnly) {
  Histogram h({1});
  h.observe(std::nan(""));
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{0, 1}));
  EXPECT_TRUE(std::isnan(s.sum));
}

TEST(Histogram, DefaultLatencyBucketsSpan50usTo10s) {
  const auto& b = default_latency_buckets_seconds();
  ASSERT_GE(b.size(), 10u);
  EXPECT_DOUBLE_EQ(b.front(), 50e-6);
  EXPECT_DOUBLE_EQ(b.back(), 10.0);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_LT(b[i - 1], b[i]);
}

TEST(Metrics, ConcurrentUpdatesFromEightThreadsSumExactly) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 100000;
  Counter c;
  Counter fractional;
  Gauge g;
  Histogram h({0.5, 1.5});
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        c.inc();
        fractional.inc(0.5);  // exact in binary: the sum is exact too
        g.add(1);
        h.observe(t % 2 == 0 ? 1.0 : 2.0);
      }
    });
  }
  for (auto& th : threads) th.join();
  constexpr uint64_t kTotal = uint64_t{kThreads} * kPerThread;
  EXPECT_EQ(c.whole(), kTotal);
  EXPECT_DOUBLE_EQ(fractional.value(), kTotal * 0.5);
  EXPECT_DOUBLE_EQ(g.value(), static_cast<double>(kTotal));
  const Histogram::Snapshot s = h.snapshot();
  EXPECT_EQ(s.count, kTotal);
  EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{0, kTotal / 2, kTotal}));
  EXPECT_DOUBLE_EQ(s.sum, kTotal / 2 * 1.0 + kTotal / 2 * 2.0);
}

}  // namespace
}  // namespace osprey::server::metrics
