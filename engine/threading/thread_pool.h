// The engine's one parallel primitive: ThreadPool::parallel_for(n, cost_per_item, fn).
//
// - fn(begin, end) is called on disjoint contiguous ranges that together cover [0, n) exactly
//   once. Ranges may run on any pool thread, in any order, concurrently.
// - A pool of 1 thread, or work too small to be worth sharing (n * cost_per_item below
//   kMinCostPerChunk, or a single chunk), runs fn(0, n) inline on the caller: no
//   synchronization, no other thread involved.
// - The caller participates: a pool of N threads starts N - 1 workers, and the calling thread
//   takes chunks like they do. parallel_for returns when every chunk has run.
// - Each call is its own job: many threads may call parallel_for on one pool at once; idle
//   workers help the oldest job that still has unclaimed chunks, and every caller works on its
//   own job, so calls never wait for one another and nested calls (parallel_for from inside fn,
//   on the same pool or another) cannot deadlock.
// - Idle workers spin for a bounded time (ThreadPoolOptions::spin_us, a few tens of
//   microseconds) and then block on a condition variable, so an idle pool uses ~no CPU and
//   several pools sharing few cores degrade gracefully instead of spinning against each other.
//   Chunks are claimed dynamically, so a worker that is not scheduled in time just does less.
// - fn must not throw (it is called through a noexcept boundary: an exception that escapes fn
//   calls std::terminate, on the caller as on a worker). Report errors through captured state.
// - The pool must outlive every parallel_for call on it; destroying it joins the workers.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace osprey {

struct ThreadPoolOptions {
  // Pin worker i (1 <= i < threads; the caller is thread 0 and is never pinned) to the
  // (i mod k)-th of the k CPUs in the process's affinity mask at construction.
  bool pin_workers = false;
  // How long an idle worker (or a caller waiting for workers to finish their chunks) spins
  // before blocking.
  int spin_us = 50;
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
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run work, the caller included (workers + 1).
  int num_threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) over disjoint contiguous ranges covering [0, n); see the top of this
  // file. cost_per_item is a rough per-item cost (about one unit per simple arithmetic
  // operation); values < 1 count as 1. n <= 0 does nothing.
  template <class F>
  void parallel_for(int64_t n, int64_t cost_per_item, F&& fn) {
    if (n <= 0) return;
    using Fn = std::remove_reference_t<F>;
    const int64_t chunk = chunk_size(n, cost_per_item);
    if (chunk >= n) {
      call_range(&fn, 0, n, [](void* f, int64_t b, int64_t e) { (*static_cast<Fn*>(f))(b, e); });
      return;
    }
    run_job(n, chunk, const_cast<void*>(static_cast<const void*>(&fn)),
            [](void* f, int64_t b, int64_t e) { (*static_cast<Fn*>(f))(b, e); });
  }

  // The items per chunk parallel_for(n, cost_per_item, ...) uses; >= n means it runs inline.
  int64_t chunk_size(int64_t n, int64_t cost_per_item) const;

 private:
  using RangeFn = void (*)(void* fn, int64_t begin, int64_t end);

  struct Job;

  // The noexcept boundary for fn.
  template <class Fn>
  static void call_range(Fn* fn, int64_t b, int64_t e, RangeFn call) noexcept {
    call(const_cast<void*>(static_cast<const void*>(fn)), b, e);
  }
  static void run_chunks(Job& job) noexcept;

  void run_job(int64_t n, int64_t chunk, void* fn, RangeFn call);
  void worker_main(int index);
  Job* find_job_locked();

  ThreadPoolOptions options_;
  std::vector<std::thread> workers_;

  std::mutex mu_;
  std::condition_variable work_cv_;  // workers: a job was posted, or stop
  std::condition_variable done_cv_;  // callers: a worker left a job
  std::deque<Job*> jobs_;            // guarded by mu_: posted jobs, oldest first
  uint64_t epoch_ = 0;               // guarded by mu_: bumped on every post (and on stop)
  int sleeping_ = 0;                 // guarded by mu_: workers blocked on work_cv_
  int waiting_callers_ = 0;          // guarded by mu_: callers blocked on done_cv_
  bool stop_ = false;                // guarded by mu_
  // Readable without mu_ while spinning: a copy of epoch_ (and stop_ as ~0).
  alignas(64) std::atomic<uint64_t> posted_{0};
};

}  // namespace osprey
