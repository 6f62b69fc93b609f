#include "threading/thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "threading/cpu_info.h"

namespace osprey {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until pred() holds or `spin_us` microseconds pass; returns whether pred() held.
template <class Pred>
bool spin_until(int spin_us, Pred pred) {
  if (pred()) return true;
  if (spin_us <= 0) return false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(spin_us);
  for (uint32_t i = 1;; ++i) {
    cpu_relax();
    if (pred()) return true;
    if ((i & 63) == 0 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

}  // namespace

// One parallel_for call. Lives on the caller's stack; workers reach it through jobs_ (under
// mu_) and count themselves in `active`, which the caller waits to drop to 0 before returning.
struct ThreadPool::Job {
  void* fn = nullptr;
  RangeFn call = nullptr;
  int64_t n = 0;
  int64_t chunk = 0;
  int64_t num_chunks = 0;
  std::atomic<int64_t> next{0};  // next unclaimed chunk
  std::atomic<int> active{0};    // workers attached (only ever incremented under mu_)
};

ThreadPool::ThreadPool(int threads, ThreadPoolOptions options) : options_(options) {
  if (threads <= 0) threads = cpu::default_thread_count();
  std::vector<int> cpus;
  if (options_.pin_workers) cpus = cpu::affinity_cpus();
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { worker_main(i); });
    if (!cpus.empty()) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpus[static_cast<size_t>(i) % cpus.size()], &set);
      // Best effort: a failure (e.g. the CPU left the mask) leaves the worker unpinned.
      (void)pthread_setaffinity_np(workers_.back().native_handle(), sizeof(set), &set);
    }
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    ++epoch_;
    posted_.store(epoch_, std::memory_order_release);
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
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

void ThreadPool::run_chunks(Job& job) noexcept {
  while (true) {
    const int64_t c = job.next.fetch_add(1, std::memory_order_relaxed);
    if (c >= job.num_chunks) return;
    const int64_t begin = c * job.chunk;
    job.call(job.fn, begin, std::min(job.n, begin + job.chunk));
  }
}

ThreadPool::Job* ThreadPool::find_job_locked() {
  for (Job* j : jobs_)
    if (j->next.load(std::memory_order_relaxed) < j->num_chunks) return j;
  return nullptr;
}

void ThreadPool::run_job(int64_t n, int64_t chunk, void* fn, RangeFn call) {
  Job job;
  job.fn = fn;
  job.call = call;
  job.n = n;
  job.chunk = chunk;
  job.num_chunks = n / chunk + (n % chunk != 0 ? 1 : 0);

  int to_wake = 0;
  bool wake_all = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(&job);
    ++epoch_;
    posted_.store(epoch_, std::memory_order_release);
    // Spinning workers see posted_ change; wake sleepers, no more than there are chunks to share.
    const int64_t helpers = job.num_chunks - 1;
    to_wake = static_cast<int>(std::min<int64_t>(sleeping_, helpers));
    wake_all = to_wake == sleeping_;
  }
  if (wake_all) {
    if (to_wake > 0) work_cv_.notify_all();
  } else {
    for (int i = 0; i < to_wake; ++i) work_cv_.notify_one();
  }

  run_chunks(job);

  // Every chunk is claimed: stop new workers from attaching, then wait for the attached ones.
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }
  const auto finished = [&] { return job.active.load(std::memory_order_acquire) == 0; };
  if (!spin_until(options_.spin_us, finished)) {
    std::unique_lock<std::mutex> lock(mu_);
    ++waiting_callers_;
    done_cv_.wait(lock, finished);
    --waiting_callers_;
  }
}

void ThreadPool::worker_main(int /*index*/) {
  uint64_t seen = 0;
  while (true) {
    spin_until(options_.spin_us, [&] { return posted_.load(std::memory_order_acquire) != seen; });
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      while (true) {
        if (stop_) return;
        job = find_job_locked();
        seen = epoch_;
        if (job) break;
        ++sleeping_;
        work_cv_.wait(lock, [&] { return stop_ || epoch_ != seen; });
        --sleeping_;
      }
      job->active.fetch_add(1, std::memory_order_relaxed);
    }
    run_chunks(*job);
    // The caller may return (and the job vanish) as soon as this drops to 0: touch it no more.
    if (job->active.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_callers_ > 0) done_cv_.notify_all();
    }
  }
}

}  // namespace osprey
