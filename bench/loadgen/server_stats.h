// The server-side breakdown: KServe v2 statistics (Triton's extension; HTTP
// GET v2/models/{m}/stats or gRPC ModelStatistics) before and after a measurement, their
// difference, and the per-request split of the client's average latency into client send,
// network + server send/recv, server queue, compute input/infer/output and client receive.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "osprey/status.h"

namespace osprey::loadgen {

struct ServerStats {
  uint64_t inference_count = 0, execution_count = 0;
  uint64_t success_count = 0, success_ns = 0;
  uint64_t fail_count = 0;
  uint64_t queue_ns = 0, compute_input_ns = 0, compute_infer_ns = 0, compute_output_ns = 0;
};

// Sums the entries of `model` (every version) in a v2 statistics JSON document.
Result<ServerStats> parse_stats_json(std::string_view json, const std::string& model);

// after - before, field by field; a counter that went backwards (server restarted, model
// reloaded) is an error.
Result<ServerStats> stats_delta(const ServerStats& before, const ServerStats& after);

struct Breakdown {
  bool has_server = false;  // false when the server gave no successful requests to divide by
  double client_avg_us = 0, client_send_us = 0, client_recv_us = 0;
  double server_queue_us = 0, compute_input_us = 0, compute_infer_us = 0, compute_output_us = 0;
  double network_us = 0;  // client avg - send - recv - server (queue + compute): wire + HTTP/gRPC
  std::string where;      // one sentence: where the time goes
};

// Per-request averages from a stats delta and the client's own averages (microseconds).
Breakdown compute_breakdown(double client_avg_us, double client_send_us, double client_recv_us,
                            const ServerStats& delta);

}  // namespace osprey::loadgen
