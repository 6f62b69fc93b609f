// One candidate of `osprey select`: a framework in one configuration (model, shape set, batch,
// threads, precision) with what a benchmark measured for it. Plain data, read from bench or
// perf result files by results_reader.h and ranked by ranking.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace osprey::bench::select {

// Latency statistics a candidate carries, in this order in Candidate::latency_ms.
enum class LatencyStat { kP50 = 0, kP90, kP95, kP99, kMax };
inline constexpr size_t kLatencyStats = 5;
const char* latency_stat_name(LatencyStat s);  // "p50", "p90", "p95", "p99", "max"

// What a candidate's numbers measure. `osprey bench` times runs inside one process; `osprey
// perf` times requests from a client through a KServe v2 server (network, queueing, batching
// included). The two are not comparable, and one selection takes only one kind.
enum class Measured { kInProcess, kThroughServer };
const char* measured_name(Measured m);  // "in-process (osprey bench)", "through a server (osprey perf)"

struct Candidate {
  std::string source;  // the result file it came from
  Measured measured = Measured::kInProcess;
  std::string framework;
  std::string version;
  std::string model;
  std::string shapes = "default";
  int64_t batch = 1;
  int threads = 1;
  std::string precision = "fp32";
  std::string precision_used;  // what the framework actually ran, when it says
  std::string shape_mode = "dynamic";  // "fixed": the model's inputs were fixed to the cell's shapes
  std::string affinity = "off";        // "on": worker threads pinned

  // Through a server only: the protocol ("http", "grpc"), the offered load ("concurrency=4",
  // "request_rate=200/s constant") and how many requests failed in the measured windows.
  std::string protocol;
  std::string load;
  int64_t failed_requests = 0;

  bool ok = true;      // measured successfully
  std::string reason;  // why not, "<status>: <reason>"

  std::array<double, kLatencyStats> latency_ms{-1, -1, -1, -1, -1};  // -1 = not recorded
  double throughput = -1;       // items per second; -1 = not recorded
  int64_t peak_rss_bytes = -1;  // -1 = not recorded
  double load_ms = -1;
  double first_inference_ms = -1;

  // Output agreement with the reference framework. is_reference: this candidate is the
  // reference (it agrees with itself). Otherwise min_cosine / min_top1 are -1 when not measured.
  bool is_reference = false;
  double min_cosine = -1;
  double min_top1 = -1;
  std::string agreement_note;  // why agreement is missing, when it is

  double latency(LatencyStat s) const { return latency_ms[static_cast<size_t>(s)]; }
  // load + first inference; -1 when either is missing.
  double cold_start_ms() const {
    return load_ms < 0 || first_inference_ms < 0 ? -1 : load_ms + first_inference_ms;
  }
};

// "threads=1 batch=1 precision=fp32 shapes=default" (+ " ran=bf16" when precision_used differs);
// through a server: "protocol=grpc concurrency=4 batch=1 shapes=default".
std::string config_label(const Candidate& c);

}  // namespace osprey::bench::select
