// The --peak and --profile parts of `osprey bench` single-model mode, and `osprey bench --peak`
// without a model: measuring the FMA peak and printing it, the model's FLOPs and achieved
// fraction of the peak, and the per-op profile tables.
#pragma once

#include <string>

#include "bench_args.h"
#include "flop_count.h"
#include "fma_peak.h"
#include "osprey/status.h"
#include "profile_summary.h"

namespace osprey::cli {

// The peak on `threads` threads (>= 1) with the widest ISA this CPU has.
Result<PeakResult> measure_peak(int threads);

// `osprey bench --peak` without MODEL: threads = --threads (0 = 1, the per-core peak).
Status bench_peak_only(const BenchArgs& args);

// What --peak adds for a model: FLOPs of one run (from a profiled run's shapes) against the
// peak on the session's threads, at the p50 latency.
struct ModelPeak {
  PeakResult peak;
  GraphFlops flops;
  double achieved_gflops = -1;  // -1 when no FLOPs were counted
  double fraction = -1;         // achieved / peak; -1 when unknown
  // Convolutions the optimizer marked for Winograd (SessionOptions::winograd). The FLOPs above
  // are the direct algorithm's, which those do with fewer multiply-adds: with any marked, the
  // achieved rate is an effective one, and the text and JSON say so.
  int winograd_nodes = 0;
};
ModelPeak model_peak(const PeakResult& peak, const GraphFlops& flops, double p50_ms);


std::string peak_json(const PeakResult& p);
std::string model_peak_text(const ModelPeak& m);
std::string model_peak_json_fields(const ModelPeak& m);  // `"peak": {...}, "flops_per_run": ...`

}  // namespace osprey::cli
