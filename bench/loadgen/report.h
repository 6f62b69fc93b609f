// Reports of a perf run: the per-step stdout line, perf_analyzer-compatible CSV (`-f` columns,
// microseconds, rows sorted by throughput), and a JSON document with settings, every step,
// errors by message and the rate-search probes.
#pragma once

#include <string>
#include <vector>

#include "rate_search.h"
#include "runner.h"

namespace osprey::loadgen {

// "Concurrency,Inferences/Second,Client Send,...,p99 latency" ("Request Rate" first in
// request-rate mode); `verbose` appends "Avg latency,request/response,response wait".
std::string csv_header(LoadMode mode, bool verbose);
std::string csv_row(const StepResult& step, bool verbose);
// Header plus one row per step, sorted by increasing throughput as perf_analyzer does.
std::string csv_document(const std::vector<StepResult>& steps, bool verbose);

struct RunSettings {
  std::string model, url, protocol, input_data;
  std::vector<std::string> shapes;
  int64_t batch_size = 1;
  MeasureSettings measure;
  double request_timeout_s = 0;
  bool http_json = false;
};

std::string json_document(const RunSettings& settings, const std::vector<StepResult>& steps,
                          const SearchResult* search, double bound_percentile, double bound_ms);

// A multi-line human summary of one step.
std::string step_text(const StepResult& step);

// The bounded percentile of a step's client latency (50, 90, 95 or 99).
double step_percentile_ms(const StepResult& step, double percentile);

}  // namespace osprey::loadgen
