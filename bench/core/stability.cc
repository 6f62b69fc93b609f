#include "core/stability.h"

#include <algorithm>
#include <cmath>

namespace osprey::bench {

bool is_stable(const std::vector<double>& window_p50s, const StabilityCriterion& criterion) {
  if (criterion.windows < 1 || window_p50s.size() < static_cast<size_t>(criterion.windows))
    return false;
  const auto first = window_p50s.end() - criterion.windows;
  double sum = 0;
  for (auto it = first; it != window_p50s.end(); ++it) sum += *it;
  const double mean = sum / criterion.windows;
  if (!(mean > 0)) return false;
  for (auto it = first; it != window_p50s.end(); ++it)
    if (std::fabs(*it - mean) > criterion.tolerance * mean) return false;
  return true;
}

const char* measure_mode_name(MeasureMode mode) {
  switch (mode) {
    case MeasureMode::kUntilStable: return "until_stable";
    case MeasureMode::kDuration: return "duration";
    case MeasureMode::kIterations: return "iterations";
  }
  return "?";
}

Status validate_plan(const MeasurePlan& plan) {
  if (plan.window_iterations < 1)
    return invalid_argument("measurement window must be at least 1 run, not ",
                            plan.window_iterations);
  switch (plan.mode) {
    case MeasureMode::kUntilStable:
      if (plan.stability.windows < 1)
        return invalid_argument("stability needs at least 1 window, not ", plan.stability.windows);
      if (!(plan.stability.tolerance > 0))
        return invalid_argument("stability tolerance must be > 0, not ", plan.stability.tolerance);
      if (plan.max_windows < plan.stability.windows)
        return invalid_argument("max windows (", plan.max_windows, ") must be at least the ",
                                plan.stability.windows, " windows the stability check compares");
      break;
    case MeasureMode::kDuration:
      if (!(plan.duration_s > 0))
        return invalid_argument("duration must be > 0 s, not ", plan.duration_s);
      break;
    case MeasureMode::kIterations:
      if (plan.iterations < 1)
        return invalid_argument("iterations must be at least 1, not ", plan.iterations);
      break;
  }
  return Status::Ok();
}

int next_window_iterations(const MeasurePlan& plan, const MeasureProgress& progress) {
  switch (plan.mode) {
    case MeasureMode::kUntilStable:
      if (is_stable(progress.window_p50_ms, plan.stability)) return 0;
      if (progress.window_p50_ms.size() >= static_cast<size_t>(plan.max_windows)) return 0;
      return plan.window_iterations;
    case MeasureMode::kDuration:
      return progress.measured_s >= plan.duration_s ? 0 : plan.window_iterations;
    case MeasureMode::kIterations:
      return static_cast<int>(
          std::clamp<int64_t>(plan.iterations - progress.iterations, 0, plan.window_iterations));
  }
  return 0;
}

}  // namespace osprey::bench
