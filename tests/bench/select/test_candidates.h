// Candidates for the select tests, built field by field.
#pragma once

#include "select/candidate.h"

namespace osprey::bench::select::testing {

// An ok candidate of model "m.onnx" with every value recorded; p99 = p50 * 1.5.
inline Candidate make(const std::string& fw, int threads, double p50_ms, double throughput,
                      int64_t rss_mb, double cold_ms) {
  Candidate c;
  c.source = "r.json";
  c.framework = fw;
  c.model = "/models/m.onnx";
  c.threads = threads;
  c.latency_ms = {p50_ms, p50_ms * 1.2, p50_ms * 1.3, p50_ms * 1.5, p50_ms * 2};
  c.throughput = throughput;
  c.peak_rss_bytes = rss_mb << 20;
  c.load_ms = cold_ms - 1;
  c.first_inference_ms = 1;
  c.min_cosine = 0.99999;
  c.min_top1 = 1;
  return c;
}

}  // namespace osprey::bench::select::testing
