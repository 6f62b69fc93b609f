// Runs a benchmark: every cell for every framework, under one protocol.
//
// For each framework: hello once (an unavailable one is reported in every cell with its reason).
// A pinned cell (Cell::pinned) is unavailable, with the framework's reason, for a framework
// whose hello does not say it pins threads; it is never run unpinned.
// For each cell, in framework order: load (timed by the framework: session load time), one run
// (first-inference latency, the cold start), then `warmup` untimed runs. Then rounds: each
// framework that still wants runs (stability.h decides) measures one window, A B C A B C ..., so
// drift of the machine hits all alike. A framework that fails is reported with the reason and
// leaves the cell; the others go on. Finally each framework writes its outputs for the cell's
// inputs and they are compared with the reference framework's (agreement.h).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/progress.h"
#include "core/report.h"
#include "core/runner.h"

namespace osprey::bench {

struct OrchestratorOptions {
  int warmup = 10;
  MeasurePlan plan;
  std::string reference = "osprey";  // falls back to the first framework with outputs in a cell
  std::string work_dir;              // per-framework scratch (converted models) and outputs
  bool compare_outputs = true;
  // Per framework: the "options" object of its load requests (adapter-specific, e.g.
  // {"performance_hint":"THROUGHPUT"}); "{}" when absent.
  std::map<std::string, std::string> load_options_json;
};

// Fills report->frameworks and report->measurements (cells x frameworks, cell-major) for
// `cells`, which the caller has put in report->cells. Fails only for bad options or a work
// directory that cannot be written; framework failures are results, not errors.
Status run_benchmark(const std::vector<FrameworkRunner*>& runners,
                     const OrchestratorOptions& options, BenchReport* report,
                     ProgressBar* progress);

}  // namespace osprey::bench
