#include "measurement.h"

namespace osprey::loadgen {

WindowResult summarize_window(const std::vector<RequestRecord>& records, double duration_s) {
  WindowResult w;
  w.duration_s = duration_s;
  std::vector<double> latencies;
  latencies.reserve(records.size());
  double send_ns = 0, recv_ns = 0;
  for (const RequestRecord& r : records) {
    if (!r.ok) {
      ++w.failed;
      ++w.errors[r.error];
      continue;
    }
    ++w.completed;
    latencies.push_back(static_cast<double>(r.latency_ns) / 1e6);
    send_ns += static_cast<double>(r.send_ns);
    recv_ns += static_cast<double>(r.recv_ns);
  }
  w.throughput = duration_s > 0 ? static_cast<double>(w.completed) / duration_s : 0;
  w.latency_ms = bench::summarize(std::move(latencies));
  if (w.completed > 0) {
    w.avg_send_us = send_ns / static_cast<double>(w.completed) / 1e3;
    w.avg_recv_us = recv_ns / static_cast<double>(w.completed) / 1e3;
  }
  return w;
}

bool windows_stable(const std::vector<WindowResult>& windows,
                    const bench::StabilityCriterion& criterion) {
  std::vector<double> throughputs, p50s;
  for (const WindowResult& w : windows) {
    throughputs.push_back(w.throughput);
    p50s.push_back(w.latency_ms.p50);
  }
  return bench::is_stable(throughputs, criterion) && bench::is_stable(p50s, criterion);
}

WindowResult merge_windows(const std::vector<std::vector<RequestRecord>>& records,
                           double total_duration_s) {
  std::vector<RequestRecord> all;
  for (const auto& window : records) all.insert(all.end(), window.begin(), window.end());
  return summarize_window(all, total_duration_s);
}

}  // namespace osprey::loadgen
