// Writes a sample registry (every metric type, escaped labels, process metrics) in the text
// exposition format, for `promtool check metrics` to lint.
#include <fstream>
#include <iostream>

#include "metrics/registry.h"

using namespace osprey::server::metrics;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " OUTPUT_FILE\n";
    return 2;
  }
  Registry r;
  auto fail = [](const osprey::Status& s) {
    std::cerr << s.to_string() << "\n";
    return 1;
  };
  auto success = r.add_counter("nv_inference_request_success_total",
                               "Number of successful inference requests.", {"model", "version"});
  if (!success.ok()) return fail(success.status());
  auto pending = r.add_gauge("osprey_pending_requests", "Requests waiting in the queue.",
                             {"model", "version"});
  if (!pending.ok()) return fail(pending.status());
  auto latency =
      r.add_histogram("osprey_request_duration_seconds", "End-to-end request time in seconds.",
                      {"model"}, default_latency_buckets_seconds());
  if (!latency.ok()) return fail(latency.status());
  if (auto s = r.add_process_metrics(); !s.ok()) return fail(s);

  (*success)->with({"resnet", "1"}).inc(12);
  (*success)->with({"we\"ird\\name\n", "2"}).inc();
  (*pending)->with({"resnet", "1"}).set(3);
  for (double v : {0.0001, 0.003, 0.02, 1.5, 30.0}) (*latency)->with({"resnet"}).observe(v);

  std::ofstream out(argv[1]);
  out << r.render();
  return out.good() ? 0 : 1;
}
