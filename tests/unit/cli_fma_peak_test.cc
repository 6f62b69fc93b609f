// The FMA peak of `osprey bench --peak`: a positive finite number on every ISA this CPU has,
// and bad arguments refused by name. Its size is never asserted (that is a benchmark).
#include <gtest/gtest.h>

#include <cmath>

#include "fma_peak.h"

namespace osprey::cli {
namespace {

TEST(FmaPeak, EverySupportedIsaMeasuresAPositiveFiniteRate) {
  int measured = 0;
  for (FmaIsa isa : {FmaIsa::kAvx512, FmaIsa::kAvx2}) {
    if (!cpu_supports(isa)) continue;
    auto r = measure_fma_peak(isa, 1, 0.01, 1);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ(r->isa, isa);
    EXPECT_EQ(r->threads, 1);
    EXPECT_GE(r->accumulators, 12);
    EXPECT_TRUE(std::isfinite(r->gflops));
    EXPECT_GT(r->gflops, 0);
    EXPECT_GT(r->seconds, 0);
    ++measured;
  }
  auto best = best_fma_isa();
  if (measured == 0) {
    EXPECT_EQ(best.status().code(), StatusCode::kUnimplemented);
    GTEST_SKIP() << "this CPU has neither avx512f nor avx2+fma";
  }
  ASSERT_TRUE(best.ok());
  auto two = measure_fma_peak(*best, 2, 0.01, 1);
  ASSERT_TRUE(two.ok()) << two.status().to_string();
  EXPECT_GT(two->gflops, 0);
  EXPECT_DOUBLE_EQ(two->gflops_per_thread(), two->gflops / 2);
}

TEST(FmaPeak, BadArgumentsAreRefused) {
  for (auto [threads, seconds, reps] : {std::tuple{0, 0.1, 1}, {1, 0.0, 1}, {1, 0.1, 0}}) {
    auto r = measure_fma_peak(FmaIsa::kAvx2, threads, seconds, reps);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace osprey::cli
