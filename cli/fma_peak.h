// `osprey bench --peak`: the machine's fp32 peak, measured by a fused multiply-add loop with
// enough independent vector accumulators to hide the FMA latency (16 zmm with AVX-512, 12 ymm
// with AVX2+FMA), on N threads at once. The vector ISA is chosen at run time from what the CPU
// supports; the result is a measurement (clock, turbo and SMT siblings show in it), not a
// datasheet number.
#pragma once

#include <string>

#include "osprey/status.h"

namespace osprey::cli {

enum class FmaIsa { kAvx512, kAvx2 };

const char* fma_isa_name(FmaIsa isa);  // "avx512f", "avx2+fma"
// Whether this CPU can run `isa`.
bool cpu_supports(FmaIsa isa);
// The widest supported ISA; kUnimplemented when the CPU has neither avx512f nor avx2+fma.
Result<FmaIsa> best_fma_isa();

struct PeakResult {
  FmaIsa isa = FmaIsa::kAvx2;
  int threads = 1;
  int accumulators = 0;  // independent vector FMA chains per thread
  double gflops = 0;     // all threads together (1 FMA = 2 FLOPs)
  double seconds = 0;    // wall time of the best repetition
  double gflops_per_thread() const { return threads > 0 ? gflops / threads : 0; }
};

// Runs the FMA loop on `threads` threads (>= 1) at once, each for about `seconds_per_rep`
// (> 0), `repetitions` (>= 1) times, and keeps the fastest repetition. Errors: bad arguments
// (kInvalidArgument), an ISA this CPU lacks (kFailedPrecondition).
Result<PeakResult> measure_fma_peak(FmaIsa isa, int threads, double seconds_per_rep,
                                    int repetitions);

}  // namespace osprey::cli
