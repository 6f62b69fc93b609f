#include "bench_peak.h"

#include <cstdio>

#include "format.h"

namespace osprey::cli {
namespace {

constexpr double kPeakSecondsPerRep = 0.2;
constexpr int kPeakRepetitions = 3;

std::string fmt(const char* f, double v) {
  char b[96];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string peak_line(const PeakResult& p) {
  return fmt("%.1f GFLOP/s fp32", p.gflops) + " on " + std::to_string(p.threads) +
         (p.threads == 1 ? " thread" : " threads") +
         fmt(" (%.1f per thread; ", p.gflops_per_thread()) + fma_isa_name(p.isa) + " FMA, " +
         std::to_string(p.accumulators) + " accumulators)";
}

}  // namespace

Result<PeakResult> measure_peak(int threads) {
  OSPREY_ASSIGN_OR_RETURN(FmaIsa isa, best_fma_isa());
  return measure_fma_peak(isa, threads, kPeakSecondsPerRep, kPeakRepetitions);
}

Status bench_peak_only(const BenchArgs& args) {
  const int threads = args.threads.front() > 0 ? args.threads.front() : 1;
  OSPREY_ASSIGN_OR_RETURN(PeakResult p, measure_peak(threads));
  if (args.json) {
    std::printf("%s\n", peak_json(p).c_str());
  } else {
    std::printf("peak:       %s\n", peak_line(p).c_str());
    std::printf("isa:        %s (chosen at run time; 1 FMA = 2 FLOPs)\n", fma_isa_name(p.isa));
  }
  return Status::Ok();
}

ModelPeak model_peak(const PeakResult& peak, const GraphFlops& flops, double p50_ms) {
  ModelPeak m;
  m.peak = peak;
  m.flops = flops;
  if (flops.counted_nodes > 0 && flops.flops > 0 && p50_ms > 0) {
    m.achieved_gflops = flops.flops / (p50_ms * 1e-3) / 1e9;
    if (peak.gflops > 0) m.fraction = m.achieved_gflops / peak.gflops;
  }
  return m;
}

std::string peak_json(const PeakResult& p) {
  return "{\"isa\": " + json_string(fma_isa_name(p.isa)) +
         ", \"threads\": " + std::to_string(p.threads) +
         ", \"accumulators\": " + std::to_string(p.accumulators) +
         ", \"gflops\": " + json_number(p.gflops) +
         ", \"gflops_per_thread\": " + json_number(p.gflops_per_thread()) +
         ", \"seconds\": " + json_number(p.seconds) + "}";
}

std::string model_peak_text(const ModelPeak& m) {
  std::string t = "peak:       " + peak_line(m.peak) + "\n";
  if (m.flops.counted_nodes == 0) {
    t += "flops:      none counted (no Conv, ConvTranspose, Gemm or MatMul ran";
    t += m.flops.unknown_nodes > 0 ? " with known shapes)\n" : ")\n";
    return t;
  }
  t += fmt("flops:      %.4f GFLOP per run", m.flops.flops / 1e9) + " (" +
       std::to_string(m.flops.counted_nodes) + " Conv/ConvTranspose/Gemm/MatMul nodes";
  if (m.flops.unknown_nodes > 0)
    t += "; " + std::to_string(m.flops.unknown_nodes) + " without shapes not counted";
  t += ")\n";
  if (m.achieved_gflops >= 0)
    t += fmt("achieved:   %.2f GFLOP/s at p50", m.achieved_gflops) +
         fmt(" = %.1f%% of peak\n", m.fraction * 100);
  if (m.achieved_gflops >= 0 && m.winograd_nodes > 0)
    t += "            an effective rate: " + std::to_string(m.winograd_nodes) +
         (m.winograd_nodes == 1 ? " convolution is" : " convolutions are") +
         " marked for Winograd; the FLOPs count the direct algorithm's, and one that runs as "
         "Winograd does fewer multiply-adds (--winograd off gives the direct rate)\n";
  return t;
}

std::string model_peak_json_fields(const ModelPeak& m) {
  return "\"peak\": " + peak_json(m.peak) + ", \"flops_per_run\": " +
         (m.flops.counted_nodes > 0 ? json_number(m.flops.flops) : "null") +
         ", \"flop_nodes_counted\": " + std::to_string(m.flops.counted_nodes) +
         ", \"flop_nodes_without_shapes\": " + std::to_string(m.flops.unknown_nodes) +
         ", \"achieved_gflops\": " +
         (m.achieved_gflops >= 0 ? json_number(m.achieved_gflops) : "null") +
         ", \"peak_fraction\": " + (m.fraction >= 0 ? json_number(m.fraction) : "null") +
         ", \"winograd_marked_nodes\": " + std::to_string(m.winograd_nodes);
}

}  // namespace osprey::cli
