// Constraints of `osprey select`: limits a candidate must meet to be ranked at all. Each parser
// reads one option's text and names the bad token in its error.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "osprey/status.h"
#include "select/candidate.h"

namespace osprey::bench::select {

struct LatencyLimit {
  LatencyStat stat = LatencyStat::kP99;
  double max_ms = 0;
};

struct Constraints {
  std::vector<LatencyLimit> sla;         // --sla
  std::optional<int64_t> max_memory;     // --max-memory, bytes of peak RSS
  std::optional<double> min_throughput;  // --min-throughput, items per second
  std::optional<double> min_cosine;      // --min-agreement cosine>=X
  std::optional<double> min_top1;        // --min-agreement top1>=X
};

// "p99<=30ms" or "p50<=2ms,p99<=30ms" (spaces allowed). Stats: p50 p90 p95 p99 max;
// units: us ms s.
Result<std::vector<LatencyLimit>> parse_sla(std::string_view text);
// "2GiB", "512MiB", "1.5GB", "300000B". Units: B KiB MiB GiB TiB KB MB GB TB.
Result<int64_t> parse_memory(std::string_view text);
// "200/s" (items per second).
Result<double> parse_throughput(std::string_view text);
// "cosine>=0.999" and/or "top1>=0.99", comma-separated; fills min_cosine / min_top1.
Status parse_agreement(std::string_view text, Constraints* out);

// Every constraint `c` violates, with the numbers: "p99 41.2 ms > 30 ms". A constraint whose
// value the candidate did not record is a violation too ("peak RSS not recorded"). Always on:
// a load-test step with failed requests ("3 failed requests") is refused.
std::vector<std::string> violations(const Candidate& c, const Constraints& constraints);

// Display helpers shared with the report: "41.2 ms", "1.50 GiB", "260/s".
std::string format_ms(double ms);
std::string format_bytes(double bytes);
std::string format_rate(double per_s);

}  // namespace osprey::bench::select
