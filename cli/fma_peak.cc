#include "fma_peak.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

namespace osprey::cli {
namespace {

constexpr int kAvx512Accumulators = 16;  // of 32 zmm; 2 more hold the multiplier and addend
constexpr int kAvx2Accumulators = 12;    // of 16 ymm

// Each step does one FMA per accumulator; the chains are independent, so the core can keep
// as many in flight as it has FMA units x latency. acc = acc * m + a converges to a / (1 - m)
// and never reaches denormals or infinities. Returns a sum the caller keeps, so the loop
// cannot be removed.
__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t steps) {
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);
  __m512 acc[kAvx512Accumulators];
#pragma GCC unroll 16
  for (int i = 0; i < kAvx512Accumulators; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i));
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 16
    for (int i = 0; i < kAvx512Accumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], m, a);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAvx512Accumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t steps) {
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
  __m256 acc[kAvx2Accumulators];
#pragma GCC unroll 12
  for (int i = 0; i < kAvx2Accumulators; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
  for (int64_t s = 0; s < steps; ++s) {
#pragma GCC unroll 12
    for (int i = 0; i < kAvx2Accumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], m, a);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kAvx2Accumulators; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  float total = 0;
  for (float v : lanes) total += v;
  return total;
}

struct IsaShape {
  int accumulators;
  int lanes;
};

IsaShape shape_of(FmaIsa isa) {
  return isa == FmaIsa::kAvx512 ? IsaShape{kAvx512Accumulators, 16}
                                : IsaShape{kAvx2Accumulators, 8};
}

float run_loop(FmaIsa isa, int64_t steps) {
  return isa == FmaIsa::kAvx512 ? fma_loop_avx512(steps) : fma_loop_avx2(steps);
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Wall time of `threads` threads each running `steps` steps, started together.
double timed_run(FmaIsa isa, int threads, int64_t steps, std::atomic<float>* sink) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  pool.reserve(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      ready.fetch_add(1);
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      const float v = run_loop(isa, steps);
      float old = sink->load();
      while (!sink->compare_exchange_weak(old, old + v)) {
      }
    });
  while (ready.load() < threads) std::this_thread::yield();
  const auto start = std::chrono::steady_clock::now();
  go.store(true, std::memory_order_release);
  for (auto& th : pool) th.join();
  return seconds_since(start);
}

}  // namespace

const char* fma_isa_name(FmaIsa isa) {
  return isa == FmaIsa::kAvx512 ? "avx512f" : "avx2+fma";
}

bool cpu_supports(FmaIsa isa) {
  __builtin_cpu_init();
  if (isa == FmaIsa::kAvx512) return __builtin_cpu_supports("avx512f");
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

Result<FmaIsa> best_fma_isa() {
  if (cpu_supports(FmaIsa::kAvx512)) return FmaIsa::kAvx512;
  if (cpu_supports(FmaIsa::kAvx2)) return FmaIsa::kAvx2;
  return unimplemented("--peak needs a CPU with avx512f or avx2+fma; this one has neither");
}

Result<PeakResult> measure_fma_peak(FmaIsa isa, int threads, double seconds_per_rep,
                                    int repetitions) {
  if (threads < 1 || threads > 4096)
    return invalid_argument("peak: threads must be in [1, 4096], got ", threads);
  if (!(seconds_per_rep > 0) || seconds_per_rep > 60)
    return invalid_argument("peak: seconds per repetition must be in (0, 60], got ",
                            seconds_per_rep);
  if (repetitions < 1 || repetitions > 1000)
    return invalid_argument("peak: repetitions must be in [1, 1000], got ", repetitions);
  if (!cpu_supports(isa))
    return failed_precondition("peak: this CPU does not support ", fma_isa_name(isa));
  const IsaShape shape = shape_of(isa);
  std::atomic<float> sink{0};
  // Calibrate on one thread: grow the step count until a run takes a measurable time.
  int64_t steps = 1 << 14;
  double t = 0;
  while ((t = timed_run(isa, 1, steps, &sink)) < 0.02 && steps < (int64_t{1} << 40)) steps *= 4;
  steps =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(steps) * seconds_per_rep / t));
  PeakResult r;
  r.isa = isa;
  r.threads = threads;
  r.accumulators = shape.accumulators;
  r.seconds = INFINITY;
  for (int rep = 0; rep < repetitions; ++rep)
    r.seconds = std::min(r.seconds, timed_run(isa, threads, steps, &sink));
  const double flops =
      2.0 * shape.accumulators * shape.lanes * static_cast<double>(steps) * threads;
  r.gflops = flops / r.seconds / 1e9;
  if (!std::isfinite(sink.load()))
    return internal_error("peak: the FMA loop produced a non-finite value");
  return r;
}

}  // namespace osprey::cli
