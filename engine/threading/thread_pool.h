// The engine's one parallel primitive: ThreadPool::parallel_for(n, cost_per_item, fn).
//
// It runs on OpenMP, the same runtime (libgomp) that oneDNN's CPU primitives use, so the engine's
// own kernels and oneDNN share one set of worker threads instead of two pools competing for the
// cores. A ThreadPool holds no threads itself: it is a thread count plus the chunking policy.
//
// - fn(begin, end) is called on disjoint contiguous ranges that together cover [0, n) exactly
//   once. Ranges may run on any thread of the call's OpenMP team, in any order, concurrently.
// - A pool of 1 thread, or work too small to be worth sharing (n * cost_per_item below
//   kMinCostPerChunk, or a single chunk), runs fn(0, n) inline on the caller: no
//   synchronization, no other thread involved.
// - The caller participates: a call opens an OpenMP parallel region of
//   min(num_threads(), chunks) threads whose thread 0 is the caller, and every team thread
//   claims chunks from one atomic counter, so a thread that is not scheduled in time just does
//   fewer chunks. parallel_for returns when every chunk has run (the region's closing barrier).
// - Many threads may call parallel_for at once, on one pool or several: OpenMP gives each
//   calling thread its own team (its own workers, kept by the runtime for that caller's later
//   calls and for the oneDNN primitives it runs), so calls never wait for one another.
// - Nested calls cannot deadlock: a parallel_for made from inside an active OpenMP parallel
//   region (from fn, or from inside a oneDNN primitive) runs fn(0, n) inline on the calling
//   thread, whatever the OpenMP nesting settings.
// - Idle threads are the OpenMP runtime's: after a region a worker spin-waits for a bounded
//   time (libgomp's GOMP_SPINCOUNT, throttled when a process has more OpenMP threads than
//   CPUs) and then sleeps on a futex, so a process that stops calling uses no CPU shortly after
//   its last call. The runtime's wait policy is its own environment's (OMP_WAIT_POLICY,
//   GOMP_SPINCOUNT); the engine does not set it.
// - fn must not throw (it is called through a noexcept boundary: an exception that escapes fn
//   calls std::terminate, on the caller as on a worker). Report errors through captured state.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace osprey {

struct ThreadPoolOptions {
  // Pin the i-th thread of every team this pool opens (1 <= i < threads; the caller is thread 0
  // and is never pinned) to the (i mod k)-th of the k CPUs in the process's affinity mask (read
  // at construction), when it first runs a chunk of this pool's work. OpenMP workers are shared
  // with oneDNN and with other pools of the same calling thread, so the pin stays with the
  // worker thread after the call.
  bool pin_workers = false;
};

class ThreadPool {
 public:
  // Below this much work (n * cost_per_item, in rough "simple operations"), a call runs
  // inline; no chunk is made smaller than this either.
  static constexpr int64_t kMinCostPerChunk = 16384;
  // Chunks per thread: a few, so that uneven chunks or a descheduled thread balance out.
  static constexpr int64_t kChunksPerThread = 4;

  // `threads` counts the caller: threads <= 0 means cpu::default_thread_count().
  explicit ThreadPool(int threads = 0, ThreadPoolOptions options = {});
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run work, the caller included: the count asked for at construction.
  int num_threads() const { return threads_; }

  // Calls fn(begin, end) over disjoint contiguous ranges covering [0, n); see the top of this
  // file. cost_per_item is a rough per-item cost (about one unit per simple arithmetic
  // operation); values < 1 count as 1. n <= 0 does nothing.
  template <class F>
  void parallel_for(int64_t n, int64_t cost_per_item, F&& fn) {
    if (n <= 0) return;
    using Fn = std::remove_reference_t<F>;
    const RangeFn call = [](void* f, int64_t b, int64_t e) { (*static_cast<Fn*>(f))(b, e); };
    void* erased = const_cast<void*>(static_cast<const void*>(&fn));
    const int64_t chunk = chunk_size(n, cost_per_item);
    if (chunk >= n) {
      call_range(call, erased, 0, n);
      return;
    }
    run_job(n, chunk, erased, call);
  }

  // With pin_workers: opens one team of num_threads() on the calling thread and pins its
  // workers as parallel_for would, so that work run on that thread's OpenMP workers outside
  // parallel_for (oneDNN primitives) runs pinned too. Once a calling thread's team of at least
  // num_threads() is pinned to these CPUs, later calls from it return at once (no parallel
  // region); without pin_workers, or with one thread, or inside an active parallel region,
  // this does nothing.
  void pin_team() const;

  // The items per chunk parallel_for(n, cost_per_item, ...) uses; >= n means it runs inline.
  int64_t chunk_size(int64_t n, int64_t cost_per_item) const;

 private:
  using RangeFn = void (*)(void* fn, int64_t begin, int64_t end);

  // The noexcept boundary for fn.
  static void call_range(RangeFn call, void* fn, int64_t b, int64_t e) noexcept { call(fn, b, e); }

  // Runs the chunks of one call on an OpenMP team (or inline when nested).
  void run_job(int64_t n, int64_t chunk, void* fn, RangeFn call) const;

  int threads_ = 1;
  ThreadPoolOptions options_;
  std::vector<int> pin_cpus_;  // the affinity mask when pin_workers, else empty
};

}  // namespace osprey
