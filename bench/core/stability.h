// When to stop measuring one framework in one cell.
//
// Measurement happens in windows of `window_iterations` timed runs. Three modes:
//   until stable: stop once the p50 of each of the last `stability.windows` windows lies within
//                 `stability.tolerance` (relative) of their mean — perf_analyzer's rule — or
//                 after `max_windows` windows (the result is then marked unstable);
//   duration:     stop once the timed runs add up to `duration_s` seconds;
//   iterations:   stop after exactly `iterations` timed runs (the last window may be shorter).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "osprey/status.h"

namespace osprey::bench {

struct StabilityCriterion {
  int windows = 3;          // how many trailing windows must agree
  double tolerance = 0.10;  // relative distance of each window's p50 from their mean
};

// True when `window_p50s` has at least criterion.windows entries and each of the last
// criterion.windows is within tolerance * mean of their mean (mean > 0).
bool is_stable(const std::vector<double>& window_p50s, const StabilityCriterion& criterion);

enum class MeasureMode { kUntilStable, kDuration, kIterations };
const char* measure_mode_name(MeasureMode mode);  // "until_stable", "duration", "iterations"

struct MeasurePlan {
  MeasureMode mode = MeasureMode::kUntilStable;
  int window_iterations = 20;
  int max_windows = 30;    // until-stable only
  double duration_s = 0;   // duration only
  int64_t iterations = 0;  // iterations only
  StabilityCriterion stability;
};

// Errors name the offending field (window < 1, tolerance <= 0, max_windows < windows, ...).
Status validate_plan(const MeasurePlan& plan);

struct MeasureProgress {
  int64_t iterations = 0;  // timed runs so far
  double measured_s = 0;   // sum of their latencies
  std::vector<double> window_p50_ms;
};

// Timed runs for the next window, or 0 when this framework has measured enough.
int next_window_iterations(const MeasurePlan& plan, const MeasureProgress& progress);

}  // namespace osprey::bench
