// One load step: N closed-loop workers (concurrency mode) or an open-loop schedule (request
// rate mode), measured in windows until stable (or for a fixed duration), with the server's
// statistics read around the windows that make the result.
#pragma once

#include <cstdint>
#include <string>

#include "arrivals.h"
#include "core/stability.h"
#include "measurement.h"
#include "server_stats.h"
#include "transport.h"

namespace osprey::loadgen {

struct MeasureSettings {
  double interval_s = 5;  // one measurement window
  int max_trials = 10;    // windows before giving up on stability
  bench::StabilityCriterion stability{3, 0.10};
  double duration_s = 0;  // > 0: one window of this length, no stability rule
};

Status validate_settings(const MeasureSettings& s);

enum class LoadMode { kConcurrency, kRequestRate };

struct LoadSpec {
  LoadMode mode = LoadMode::kConcurrency;
  double value = 1;  // workers, or requests per second
  Distribution distribution = Distribution::kPoisson;
  uint64_t seed = 0;
  int max_threads = 16;  // request-rate mode: workers that send on schedule
};

struct StepResult {
  LoadSpec load;
  WindowResult client;  // merged result of the windows that count
  int windows = 0;      // windows measured in all
  bool stable = false;  // true in duration mode
  Breakdown breakdown;
  ServerStats server_delta;
  std::string server_stats_error;  // why there is no breakdown, when there is none
  int64_t scheduled = 0, late = 0;  // request-rate mode: sends more than 1 ms behind schedule
  double max_late_ms = 0;
};

// Runs one step. Fails only when workers cannot be created; request failures are counted.
Result<StepResult> run_step(Transport& transport, const LoadSpec& load, const MeasureSettings& settings);

}  // namespace osprey::loadgen
