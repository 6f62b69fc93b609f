// Many threads submitting to one BatchQueue at once: what the scheduler tests check afterwards
// (every request ran exactly once, no instance ran two batches at once, nothing was rejected).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/batch_queue.h"

namespace osprey::server::scheduler::testing {

struct ConcurrentRun {
  std::map<uint64_t, int> runs_per_id;
  bool overlap = false;      // an instance ran two batches at once
  int rejects = 0;
  size_t largest_batch = 0;
  uint64_t direct_batches = 0;
};

// `threads` x `per_thread` one-row requests (ids 1..n, shape key "k") on `instances` instances.
inline ConcurrentRun run_concurrent_submitters(BatcherConfig c, int instances, int threads, int per_thread) {
  SystemClock clock;
  c.max_queue_size = threads * per_thread;
  ConcurrentRun out;
  std::mutex mu;
  std::vector<std::atomic<int>> in_flight(static_cast<size_t>(instances));
  std::atomic<bool> overlap{false};
  std::atomic<int> rejects{0};
  auto execute = [&](int instance, std::vector<uint64_t> ids) {
    if (in_flight[static_cast<size_t>(instance)].fetch_add(1) != 0) overlap = true;
    {
      std::lock_guard<std::mutex> lock(mu);
      out.largest_batch = std::max(out.largest_batch, ids.size());
      for (uint64_t id : ids) ++out.runs_per_id[id];
    }
    in_flight[static_cast<size_t>(instance)].fetch_sub(1);
  };
  BatchQueue q(c, instances, &clock, execute, [&](uint64_t, Status) { ++rejects; });
  std::vector<std::thread> submitters;
  for (int t = 0; t < threads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        PendingItem p;
        p.id = static_cast<uint64_t>(t) * per_thread + i + 1;
        p.shape_key = std::string(1, 'k');
        const Status s = q.submit(p);
        EXPECT_TRUE(s.ok()) << s.to_string();
      }
    });
  }
  for (auto& th : submitters) th.join();
  q.stop();
  out.overlap = overlap;
  out.rejects = rejects;
  out.direct_batches = q.direct_batches();
  return out;
}

inline void expect_each_ran_once(const ConcurrentRun& r, size_t requests) {
  EXPECT_EQ(r.runs_per_id.size(), requests);
  for (const auto& [id, n] : r.runs_per_id) ASSERT_EQ(n, 1) << "id " << id;
  EXPECT_FALSE(r.overlap) << "an instance ran two batches at once";
  EXPECT_EQ(r.rejects, 0);
}

}  // namespace osprey::server::scheduler::testing
