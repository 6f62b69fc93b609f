#include "core/statistics.h"

#include <gtest/gtest.h>

#include <cmath>

namespace osprey::bench {
namespace {

TEST(BenchStatistics, PercentilesInterpolateLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) = [1, 1.75, 2.5, 3.7, 4]
  const std::vector<double> v = {4, 1, 3, 2};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(percentile(v, 25), 1.75);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 2.5);
  EXPECT_NEAR(percentile(v, 90), 3.7, 1e-12);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 4);
  EXPECT_DOUBLE_EQ(percentile(v, 250), 4);  // clamped
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
}

TEST(BenchStatistics, SummaryOfOneToHundred) {
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  const Summary s = summarize(v);
  EXPECT_EQ(s.count, 100u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  EXPECT_DOUBLE_EQ(s.p50, 50.5);
  EXPECT_NEAR(s.p90, 90.1, 1e-9);
  EXPECT_NEAR(s.p95, 95.05, 1e-9);
  EXPECT_NEAR(s.p99, 99.01, 1e-9);
  EXPECT_NEAR(s.stdev, 29.011491975882016, 1e-9);  // numpy.std(..., ddof=1)
}

TEST(BenchStatistics, EmptyAndSingle) {
  EXPECT_EQ(summarize({}).count, 0u);
  const Summary one = summarize({3.5});
  EXPECT_DOUBLE_EQ(one.p99, 3.5);
  EXPECT_DOUBLE_EQ(one.stdev, 0);
}

TEST(BenchStatistics, CdfPointsSpanMinToMax) {
  const auto cdf = cdf_points({5, 1, 3}, 5);
  ASSERT_EQ(cdf.size(), 5u);
  EXPECT_DOUBLE_EQ(cdf.front(), 1);
  EXPECT_DOUBLE_EQ(cdf[2], 3);
  EXPECT_DOUBLE_EQ(cdf.back(), 5);
  for (size_t i = 1; i < cdf.size(); ++i) EXPECT_LE(cdf[i - 1], cdf[i]);
  EXPECT_TRUE(cdf_points({}, 10).empty());
}

}  // namespace
}  // namespace osprey::bench
