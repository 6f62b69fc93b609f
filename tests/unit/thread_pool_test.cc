#include "threading/thread_pool.h"

#include <gtest/gtest.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "threading/cpu_info.h"

namespace osprey {
namespace {

constexpr int64_t kExpensive = int64_t{1} << 40;  // cost that always splits as finely as allowed

// Runs parallel_for and checks that every index in [0, n) was visited exactly once by
// well-formed ranges.
void expect_each_index_once(ThreadPool& pool, int64_t n, int64_t cost) {
  std::vector<std::atomic<int>> seen(static_cast<size_t>(std::max<int64_t>(n, 0)));
  std::atomic<int> bad_ranges{0};
  pool.parallel_for(n, cost, [&](int64_t b, int64_t e) {
    if (b < 0 || e > n || b >= e) {
      bad_ranges.fetch_add(1);
      return;
    }
    for (int64_t i = b; i < e; ++i)
      seen[static_cast<size_t>(i)].fetch_add(1, std::memory_order_relaxed);
  });
  EXPECT_EQ(bad_ranges.load(), 0) << "n=" << n << " cost=" << cost
                                  << " threads=" << pool.num_threads();
  int64_t wrong = 0;
  for (auto& s : seen) wrong += s.load() != 1;
  EXPECT_EQ(wrong, 0) << "n=" << n << " cost=" << cost << " threads=" << pool.num_threads();
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Waits (bounded) until `count` reaches `target`; the bound only turns a bug into a failure
// instead of a hang.
bool wait_for_count(const std::atomic<int>& count, int target) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (count.load() < target) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

TEST(ThreadPool, VisitsEveryIndexExactlyOnce) {
  for (int threads : {1, 2, 3, 4, 7}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {0, 1, 2, 3, 5, 6, 7, 8, 13, 64, 100, 1000, 4097, 100003})
      for (int64_t cost : {int64_t{1}, int64_t{100}, int64_t{5000}, kExpensive})
        expect_each_index_once(pool, n, cost);
  }
}

TEST(ThreadPool, ChunkSizes) {
  ThreadPool one(1);
  EXPECT_EQ(one.chunk_size(1000, kExpensive), 1000);  // a pool of 1 never splits
  ThreadPool pool(4);
  EXPECT_EQ(pool.chunk_size(0, 1), 1);
  EXPECT_EQ(pool.chunk_size(1, kExpensive), 1);
  EXPECT_EQ(pool.chunk_size(100, 1), 100);  // too little work: inline
  EXPECT_EQ(pool.chunk_size(ThreadPool::kMinCostPerChunk - 1, 1), ThreadPool::kMinCostPerChunk - 1);
  EXPECT_EQ(pool.chunk_size(3, kExpensive), 1);     // n < threads: one item each
  EXPECT_EQ(pool.chunk_size(160, kExpensive), 10);  // 4 threads x 4 chunks
  EXPECT_EQ(pool.chunk_size(161, kExpensive), 11);
  // No chunk below kMinCostPerChunk of work.
  EXPECT_EQ(pool.chunk_size(40000, 2), ThreadPool::kMinCostPerChunk / 2);
  EXPECT_EQ(pool.chunk_size(1 << 20, 2), (1 << 20) / 16);
  // Overflowing n * cost is fine.
  EXPECT_EQ(pool.chunk_size(INT64_MAX, INT64_MAX), INT64_MAX / 16 + 1);
  EXPECT_EQ(pool.chunk_size(16, 0), 16);  // cost < 1 counts as 1
}

TEST(ThreadPool, SmallWorkAndSingleThreadRunInlineOnCaller) {
  const auto caller = std::this_thread::get_id();
  for (int threads : {1, 4}) {
    ThreadPool pool(threads);
    int calls = 0;  // not atomic: inline means no other thread
    std::thread::id where;
    int64_t b0 = -1, e0 = -1;
    const int64_t n = threads == 1 ? 1000000 : 10;
    const int64_t cost = threads == 1 ? kExpensive : 1;
    pool.parallel_for(n, cost, [&](int64_t b, int64_t e) {
      ++calls;
      where = std::this_thread::get_id();
      b0 = b;
      e0 = e;
    });
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(where, caller);
    EXPECT_EQ(b0, 0);
    EXPECT_EQ(e0, n);
  }
}

// n == threads chunks, and each chunk waits until all have started: this only finishes if every
// thread, the caller included, runs a chunk at the same time.
TEST(ThreadPool, CallerAndAllWorkersRunConcurrently) {
  for (int threads : {2, 4}) {
    ThreadPool pool(threads);
    ASSERT_EQ(pool.chunk_size(threads, kExpensive), 1);
    std::atomic<int> started{0};
    std::atomic<bool> timed_out{false};
    std::mutex mu;
    std::set<std::thread::id> ids;
    pool.parallel_for(threads, kExpensive, [&](int64_t, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      started.fetch_add(1);
      if (!wait_for_count(started, threads)) timed_out = true;
    });
    EXPECT_FALSE(timed_out.load());
    EXPECT_EQ(static_cast<int>(ids.size()), threads);
    EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);
  }
}

TEST(ThreadPool, ConcurrentCallersOnOnePool) {
  ThreadPool pool(3);
  constexpr int kCallers = 4;
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int iter = 0; iter < 40; ++iter) {
        const int64_t n = 1 + (c * 37 + iter * 101) % 3000;
        std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
        pool.parallel_for(n, kExpensive, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
        });
        for (auto& s : seen)
          if (s.load() != 1) failures.fetch_add(1);
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(ThreadPool, NestedCallsOnSamePool) {
  for (int threads : {1, 2, 4}) {
    ThreadPool pool(threads);
    constexpr int64_t kOuter = 9, kInner = 500;
    std::vector<std::atomic<int>> seen(kOuter * kInner);
    pool.parallel_for(kOuter, kExpensive, [&](int64_t ob, int64_t oe) {
      for (int64_t o = ob; o < oe; ++o) {
        pool.parallel_for(kInner, kExpensive, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(o * kInner + i)].fetch_add(1);
        });
      }
    });
    int64_t wrong = 0;
    for (auto& s : seen) wrong += s.load() != 1;
    EXPECT_EQ(wrong, 0) << "threads=" << threads;
  }
}

// A call made from inside another call's fn runs inline on the calling thread, as one range.
TEST(ThreadPool, NestedCallRunsInlineOnTheCallingThread) {
  ThreadPool outer(2), inner(4);
  std::atomic<int> not_inline{0}, inner_calls{0};
  outer.parallel_for(2, kExpensive, [&](int64_t, int64_t) {
    const auto me = std::this_thread::get_id();
    inner.parallel_for(1000, kExpensive, [&](int64_t b, int64_t e) {
      inner_calls.fetch_add(1);
      if (std::this_thread::get_id() != me || b != 0 || e != 1000) not_inline.fetch_add(1);
    });
  });
  EXPECT_EQ(inner_calls.load(), 2);
  EXPECT_EQ(not_inline.load(), 0);
}

// parallel_for runs on an OpenMP team (the runtime oneDNN uses) whose thread 0 is the caller,
// sized min(threads, chunks); after the call the caller is outside any region again.
TEST(ThreadPool, RunsOnAnOpenMpTeamLedByTheCaller) {
  ThreadPool pool(3);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> started{0}, wrong{0};
  pool.parallel_for(3, kExpensive, [&](int64_t, int64_t) {
    if (!omp_in_parallel() || omp_get_num_threads() != 3) wrong.fetch_add(1);
    if ((omp_get_thread_num() == 0) != (std::this_thread::get_id() == caller)) wrong.fetch_add(1);
    started.fetch_add(1);
    if (!wait_for_count(started, 3)) wrong.fetch_add(1);
  });
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(omp_in_parallel());
  // Fewer chunks than threads: a smaller team.
  std::atomic<int> team{0};
  pool.parallel_for(2, kExpensive, [&](int64_t, int64_t) { team = omp_get_num_threads(); });
  EXPECT_EQ(team.load(), 2);
}

// Two "sessions" with a pool each, more threads than cores, used at once: both finish, correctly.
TEST(ThreadPool, SeveralPoolsShareCores) {
  const int cores = static_cast<int>(std::max<size_t>(cpu::affinity_cpus().size(), 1));
  ThreadPool a(cores + 1), b(cores + 1);
  std::atomic<int> failures{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto use = [&](ThreadPool& pool) {
    for (int iter = 0; iter < 200; ++iter) {
      std::vector<std::atomic<int>> seen(256);
      pool.parallel_for(256, kExpensive, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) seen[static_cast<size_t>(i)].fetch_add(1);
      });
      for (auto& s : seen)
        if (s.load() != 1) failures.fetch_add(1);
    }
  };
  std::thread ta([&] { use(a); }), tb([&] { use(b); });
  ta.join();
  tb.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(failures.load(), 0);
  // 400 tiny jobs: milliseconds when threads back off; only a pathological collapse (spinning
  // threads starving the ones with work) gets anywhere near this bound.
  EXPECT_LT(secs, 15.0);
}

// After its last call a pool's OpenMP workers spin for a bounded time, then sleep: once that
// spin is over (well under the 500 ms waited here), the process uses no CPU.
TEST(ThreadPool, IdlePoolUsesNoCpu) {
  ThreadPool pool(4);
  std::atomic<int64_t> sum{0};
  for (int iter = 0; iter < 20; ++iter)
    pool.parallel_for(4096, kExpensive, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  EXPECT_EQ(sum.load(), 20 * 4096);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double before = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double used = process_cpu_seconds() - before;
  EXPECT_LT(used, 0.02) << "an idle pool of 4 used " << used << " s of CPU in 300 ms";
}

TEST(ThreadPool, PinnedWorkersRunOnTheirCpu) {
  const auto cpus = cpu::affinity_cpus();
  ASSERT_FALSE(cpus.empty());
  ThreadPoolOptions opts;
  opts.pin_workers = true;
  ThreadPool pool(2, opts);
  std::atomic<int> started{0};
  std::atomic<bool> timed_out{false};
  std::mutex mu;
  std::vector<std::vector<int>> worker_masks;
  const auto caller = std::this_thread::get_id();
  pool.parallel_for(2, kExpensive, [&](int64_t, int64_t) {
    started.fetch_add(1);
    if (!wait_for_count(started, 2)) timed_out = true;
    if (std::this_thread::get_id() == caller) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    pthread_getaffinity_np(pthread_self(), sizeof(set), &set);
    std::lock_guard<std::mutex> lock(mu);
    worker_masks.push_back(cpu::cpus_in_set(set));
  });
  EXPECT_FALSE(timed_out.load());
  ASSERT_EQ(worker_masks.size(), 1u);
  EXPECT_EQ(worker_masks[0], std::vector<int>{cpus[1 % cpus.size()]});
  // The caller's own affinity is untouched.
  EXPECT_EQ(cpu::affinity_cpus(), cpus);
  // More pinned workers than CPUs wrap around and still work.
  ThreadPool wide(static_cast<int>(cpus.size()) + 2, opts);
  expect_each_index_once(wide, 10000, kExpensive);
}

TEST(ThreadPool, DefaultSizeAndQuickCreateDestroy) {
  {
    ThreadPool pool;
    EXPECT_EQ(pool.num_threads(), cpu::default_thread_count());
  }
  for (int i = 0; i < 50; ++i) {
    ThreadPool pool(1 + i % 4);
    if (i % 2) expect_each_index_once(pool, 37, kExpensive);
  }
}

}  // namespace
}  // namespace osprey
