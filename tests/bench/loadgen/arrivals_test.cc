// Statistics of the seeded schedules (not timing): mean gap and spread per distribution.
#include "arrivals.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace osprey::loadgen {
namespace {

std::vector<double> gaps_ms(double rate, Distribution d, uint64_t seed, int n) {
  ArrivalSchedule s(rate, d, seed);
  std::vector<double> gaps;
  int64_t prev = s.next_offset_ns();
  for (int i = 0; i < n; ++i) {
    const int64_t next = s.next_offset_ns();
    gaps.push_back(static_cast<double>(next - prev) / 1e6);
    prev = next;
  }
  return gaps;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

TEST(ArrivalSchedule, ConstantGapsAreExactlyOneOverRate) {
  const auto gaps = gaps_ms(200, Distribution::kConstant, 1, 1000);
  for (double g : gaps) EXPECT_NEAR(g, 5.0, 1e-5);
}

TEST(ArrivalSchedule, FirstRequestAtTimeZero) {
  ArrivalSchedule s(50, Distribution::kPoisson, 3);
  EXPECT_EQ(s.next_offset_ns(), 0);
}

TEST(ArrivalSchedule, PoissonMeanRateAndExponentialSpread) {
  const auto gaps = gaps_ms(100, Distribution::kPoisson, 42, 200000);
  const double m = mean(gaps);
  EXPECT_NEAR(m, 10.0, 0.2);  // mean gap 1/rate
  double var = 0;
  for (double g : gaps) var += (g - m) * (g - m);
  const double sd = std::sqrt(var / static_cast<double>(gaps.size() - 1));
  EXPECT_NEAR(sd / m, 1.0, 0.03);  // exponential: coefficient of variation 1
  for (double g : gaps) ASSERT_GE(g, 0);
}

TEST(ArrivalSchedule, SameSeedSameSchedule) {
  EXPECT_EQ(gaps_ms(30, Distribution::kPoisson, 7, 100), gaps_ms(30, Distribution::kPoisson, 7, 100));
  EXPECT_NE(gaps_ms(30, Distribution::kPoisson, 7, 100), gaps_ms(30, Distribution::kPoisson, 8, 100));
}

}  // namespace
}  // namespace osprey::loadgen
