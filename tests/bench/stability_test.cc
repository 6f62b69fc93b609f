#include "core/stability.h"

#include <gtest/gtest.h>

namespace osprey::bench {
namespace {

TEST(BenchStability, LastThreeWindowsWithinTolerance) {
  StabilityCriterion c;  // 3 windows, 10%
  EXPECT_FALSE(is_stable({}, c));
  EXPECT_FALSE(is_stable({10, 10}, c));  // too few windows
  EXPECT_TRUE(is_stable({10, 10.5, 9.6}, c));
  EXPECT_FALSE(is_stable({10, 10, 13}, c));            // 13 is 18% above the mean 11
  EXPECT_TRUE(is_stable({50, 20, 10, 10.5, 9.6}, c));  // only the last three count
  EXPECT_FALSE(is_stable({10, 10.5, 9.6, 30}, c));
  EXPECT_FALSE(is_stable({0, 0, 0}, c));  // no meaningful mean
  c.tolerance = 0.01;
  EXPECT_FALSE(is_stable({10, 10.5, 9.6}, c));
  c.windows = 1;
  EXPECT_TRUE(is_stable({3}, c));
}

TEST(BenchStability, UntilStableStopsWhenStableOrAtMaxWindows) {
  MeasurePlan plan;
  plan.window_iterations = 7;
  plan.max_windows = 4;
  MeasureProgress p;
  EXPECT_EQ(next_window_iterations(plan, p), 7);
  p.window_p50_ms = {10, 20, 10};
  EXPECT_EQ(next_window_iterations(plan, p), 7);
  p.window_p50_ms = {10, 20, 10, 30};
  EXPECT_EQ(next_window_iterations(plan, p), 0);  // gave up: max windows
  p.window_p50_ms = {20, 10, 10};
  EXPECT_EQ(next_window_iterations(plan, p), 7);
  p.window_p50_ms = {10, 10, 10};
  EXPECT_EQ(next_window_iterations(plan, p), 0);  // stable
}

TEST(BenchStability, DurationAndIterationModes) {
  MeasurePlan d;
  d.mode = MeasureMode::kDuration;
  d.duration_s = 2;
  d.window_iterations = 5;
  MeasureProgress p;
  p.measured_s = 1.9;
  EXPECT_EQ(next_window_iterations(d, p), 5);
  p.measured_s = 2.0;
  EXPECT_EQ(next_window_iterations(d, p), 0);

  MeasurePlan n;
  n.mode = MeasureMode::kIterations;
  n.iterations = 12;
  n.window_iterations = 5;
  MeasureProgress q;
  EXPECT_EQ(next_window_iterations(n, q), 5);
  q.iterations = 10;
  EXPECT_EQ(next_window_iterations(n, q), 2);  // last window is shorter
  q.iterations = 12;
  EXPECT_EQ(next_window_iterations(n, q), 0);
}

TEST(BenchStability, ValidatePlanNamesTheBadField) {
  MeasurePlan p;
  EXPECT_TRUE(validate_plan(p).ok());
  p.window_iterations = 0;
  EXPECT_NE(validate_plan(p).message().find("window"), std::string::npos);
  p = {};
  p.stability.tolerance = 0;
  EXPECT_NE(validate_plan(p).message().find("tolerance"), std::string::npos);
  p = {};
  p.max_windows = 2;
  EXPECT_NE(validate_plan(p).message().find("max windows"), std::string::npos);
  p = {};
  p.mode = MeasureMode::kDuration;
  EXPECT_EQ(validate_plan(p).code(), StatusCode::kInvalidArgument);
  p = {};
  p.mode = MeasureMode::kIterations;
  EXPECT_NE(validate_plan(p).message().find("iterations"), std::string::npos);
}

}  // namespace
}  // namespace osprey::bench
