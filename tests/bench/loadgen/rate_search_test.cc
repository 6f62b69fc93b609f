#include "rate_search.h"

#include <gtest/gtest.h>

namespace osprey::loadgen {
namespace {

// A fake server: latency 1 ms below its capacity, 100 ms above.
std::function<Result<double>(double)> fake(double capacity, std::vector<double>* seen = nullptr) {
  return [=](double rate) -> Result<double> {
    if (seen) seen->push_back(rate);
    return rate <= capacity ? 1.0 : 100.0;
  };
}

TEST(SearchMaxRate, BisectsToTheCapacity) {
  SearchPlan plan{10, 1000, 5, 0.01, 30};
  auto r = search_max_rate(plan, fake(437));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->found);
  EXPECT_LE(r->best_rate, 437);
  EXPECT_GE(r->best_rate, 437 * 0.98);
  EXPECT_EQ(r->probes[0].rate, 10);
  EXPECT_EQ(r->probes[1].rate, 1000);
  EXPECT_FALSE(r->probes[1].met);
  for (const Probe& p : r->probes) EXPECT_EQ(p.met, p.rate <= 437);
}

TEST(SearchMaxRate, LowMissEndsAtOnce) {
  std::vector<double> seen;
  auto r = search_max_rate({10, 1000, 5, 0.01, 30}, fake(5, &seen));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->found);
  EXPECT_EQ(seen, (std::vector<double>{10}));
}

TEST(SearchMaxRate, HighHitEndsAtOnce) {
  auto r = search_max_rate({10, 1000, 5, 0.01, 30}, fake(5000));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->best_rate, 1000);
  EXPECT_EQ(r->probes.size(), 2u);
}

TEST(SearchMaxRate, RespectsMaxProbes) {
  auto r = search_max_rate({1, 1e6, 5, 1e-9, 6}, fake(777));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->probes.size(), 6u);
}

TEST(SearchMaxRate, MeasurementErrorPropagatesAndBadPlansAreRefused) {
  auto failing = [](double) -> Result<double> { return unavailable("server gone"); };
  EXPECT_EQ(search_max_rate({1, 10, 5, 0.1, 10}, failing).status().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(search_max_rate({0, 10, 5, 0.1, 10}, fake(1)).ok());
  EXPECT_FALSE(search_max_rate({20, 10, 5, 0.1, 10}, fake(1)).ok());
  EXPECT_FALSE(search_max_rate({1, 10, 0, 0.1, 10}, fake(1)).ok());
}

}  // namespace
}  // namespace osprey::loadgen
