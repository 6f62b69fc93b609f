// Client-side measurement: per-request records, their per-window summary (throughput,
// percentiles from osprey_bench's statistics), the stability rule over windows, and the merge
// of the final windows into one step result.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/stability.h"
#include "core/statistics.h"

namespace osprey::loadgen {

struct RequestRecord {
  int64_t end_ns = 0;      // steady-clock time the request finished
  int64_t latency_ns = 0;  // from the (scheduled) send time to the end
  int64_t send_ns = 0;     // client: writing the request
  int64_t recv_ns = 0;     // client: checking the response after it arrived
  bool ok = true;
  std::string error;  // when !ok
};

struct WindowResult {
  double duration_s = 0;
  int64_t completed = 0;  // successful requests
  int64_t failed = 0;
  double throughput = 0;  // successful requests per second
  bench::Summary latency_ms;
  double avg_send_us = 0, avg_recv_us = 0;
  std::map<std::string, int64_t> errors;  // message -> count
};

// Summary of the records of one window lasting `duration_s` (> 0).
WindowResult summarize_window(const std::vector<RequestRecord>& records, double duration_s);

// perf_analyzer's rule: the last `criterion.windows` windows' throughput and p50 each lie
// within the tolerance of their mean.
bool windows_stable(const std::vector<WindowResult>& windows,
                    const bench::StabilityCriterion& criterion);

// Merges windows (records pooled, durations summed) into one result.
WindowResult merge_windows(const std::vector<std::vector<RequestRecord>>& records,
                           double total_duration_s);

}  // namespace osprey::loadgen
