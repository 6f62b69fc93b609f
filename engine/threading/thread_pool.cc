#include "threading/thread_pool.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <limits>

#include "threading/cpu_info.h"

namespace osprey {

namespace {

// The CPU this OpenMP worker thread was last pinned to by a pool (-1: never).
thread_local int t_pinned_cpu = -1;

void pin_calling_thread(int cpu) {
  if (t_pinned_cpu == cpu) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Best effort: a failure (e.g. the CPU left the mask) leaves the thread where it was.
  if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0) t_pinned_cpu = cpu;
}

}  // namespace

ThreadPool::ThreadPool(int threads, ThreadPoolOptions options)
    : threads_(threads > 0 ? threads : cpu::default_thread_count()), options_(options) {
  if (options_.pin_workers) pin_cpus_ = cpu::affinity_cpus();
}

int64_t ThreadPool::chunk_size(int64_t n, int64_t cost_per_item) const {
  if (n <= 1) return std::max<int64_t>(n, 1);
  const int64_t threads = num_threads();
  if (threads <= 1) return n;
  const int64_t cost = std::max<int64_t>(cost_per_item, 1);
  int64_t total = 0;
  if (__builtin_mul_overflow(n, cost, &total)) total = std::numeric_limits<int64_t>::max();
  if (total < kMinCostPerChunk) return n;
  const int64_t min_items = cost >= kMinCostPerChunk ? 1 : (kMinCostPerChunk + cost - 1) / cost;
  const int64_t target_chunks = threads * kChunksPerThread;
  const int64_t chunk = std::max(n / target_chunks + (n % target_chunks != 0 ? 1 : 0), min_items);
  return std::min(chunk, n);
}

void ThreadPool::pin_team() const {
  if (pin_cpus_.empty() || threads_ <= 1 || omp_in_parallel()) return;
  // The calling thread's team as last pinned here: libgomp keeps a master thread's workers, so a
  // team already pinned to the same CPUs needs no parallel region (which costs a wake-up of
  // every worker on each run).
  thread_local std::vector<int> t_team_cpus;
  thread_local int t_team_size = 0;
  if (t_team_size >= threads_ && t_team_cpus == pin_cpus_) return;
  const std::vector<int>& pin = pin_cpus_;
#pragma omp parallel num_threads(threads_) default(none) shared(pin)
  {
    const int me = omp_get_thread_num();
    if (me > 0) pin_calling_thread(pin[static_cast<size_t>(me) % pin.size()]);
  }
  t_team_cpus = pin_cpus_;
  t_team_size = threads_;
}

void ThreadPool::run_job(int64_t n, int64_t chunk, void* fn, RangeFn call) const {
  // Inside an active region (a nested call): the enclosing team already uses the threads.
  if (omp_in_parallel()) {
    call_range(call, fn, 0, n);
    return;
  }
  const int64_t num_chunks = n / chunk + (n % chunk != 0 ? 1 : 0);
  const int team = static_cast<int>(std::min<int64_t>(threads_, num_chunks));
  const std::vector<int>& pin = pin_cpus_;
  alignas(64) std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(team) default(none) \
    shared(next, pin, n, chunk, fn, call, num_chunks)
  {
    const int me = omp_get_thread_num();
    if (me > 0 && !pin.empty()) pin_calling_thread(pin[static_cast<size_t>(me) % pin.size()]);
    while (true) {
      const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
      if (c >= num_chunks) break;
      const int64_t begin = c * chunk;
      call_range(call, fn, begin, std::min(n, begin + chunk));
    }
  }
}

}  // namespace osprey
