// BatchQueue's direct path: batches that are ready at once go from submit() to an idle worker,
// and a worker that finishes runs the next ready batch itself, without the scheduler thread.
// The semantics (priorities, ordering, caps, stop) are those of the scheduler path.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "concurrent_submitters.h"
#include "scheduler/batch_queue.h"

namespace osprey::server::scheduler {
namespace {

using Ids = std::vector<uint64_t>;
using namespace std::chrono_literals;

PendingItem item(uint64_t id, int priority = 0) {
  PendingItem p;
  p.id = id;
  p.shape_key = std::string(1, 'k');
  p.priority = priority;
  return p;
}

BatcherConfig no_batching() {
  return BatcherConfig{};
}  // max_batch_size 0: every request alone

// Dynamic batching without a delay: a batch of one is ready at once.
BatcherConfig batching_without_delay(int max_batch) {
  BatcherConfig c;
  c.max_batch_size = max_batch;
  return c;
}

// An ExecuteFn that records batches in order and can hold the instances until released.
class Gate {
 public:
  explicit Gate(bool open) : open_(open) {}
  BatchQueue::ExecuteFn execute() {
    return [this](int, Ids ids) {
      std::unique_lock<std::mutex> lock(mu_);
      batches_.push_back(ids);
      ++started_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return open_; });
    };
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool wait_started(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, [&] { return started_ >= n; });
  }
  std::vector<Ids> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_;
  size_t started_ = 0;
  std::vector<Ids> batches_;
};

void ignore_reject(uint64_t, Status) {}

// One request at a time on an idle instance: each goes straight to the worker. The scheduler
// thread is not woken per request (a few passes may come from a submit that lands while the
// worker is still finishing the previous request: then the request waits in the queue).
TEST(BatchQueueDirect, SequentialRequestsSkipTheSchedulerThread) {
  for (const BatcherConfig& config : {no_batching(), batching_without_delay(8)}) {
    SystemClock clock;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<uint64_t> ran;
    auto execute = [&](int, Ids ids) {
      std::lock_guard<std::mutex> lock(mu);
      ran.insert(ran.end(), ids.begin(), ids.end());
      cv.notify_all();
    };
    BatchQueue q(config, 2, &clock, execute, ignore_reject);
    std::this_thread::sleep_for(20ms);  // let the scheduler thread reach its first sleep
    const uint64_t passes_before = q.scheduler_passes();
    constexpr uint64_t kRequests = 300;
    for (uint64_t id = 1; id <= kRequests; ++id) {
      ASSERT_TRUE(q.submit(item(id)).ok());
      std::unique_lock<std::mutex> lock(mu);
      ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return ran.size() == id; }));
    }
    const uint64_t passes = q.scheduler_passes() - passes_before;
    EXPECT_LE(passes, kRequests / 10) << "the scheduler thread woke up per request";
    EXPECT_GE(q.direct_batches(), kRequests - kRequests / 10);
    q.stop();
    for (uint64_t i = 0; i < kRequests; ++i) ASSERT_EQ(ran[i], i + 1);
  }
}

// While the only instance is busy, requests queue up; the worker then takes them itself in
// priority order (level 1 first, FIFO within a level), one per batch (the model does not batch).
TEST(BatchQueueDirect, FinishingWorkerTakesNextBatchInPriorityOrder) {
  FakeClock clock;
  Gate gate(false);
  BatcherConfig c = no_batching();
  c.priority_levels = 2;
  c.default_priority_level = 2;
  BatchQueue q(c, 1, &clock, gate.execute(), ignore_reject);
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(gate.wait_started(1));
  EXPECT_EQ(q.direct_batches(), 1u) << "an idle instance got the request from submit()";
  ASSERT_TRUE(q.submit(item(2, 2)).ok());
  ASSERT_TRUE(q.submit(item(3, 1)).ok());
  ASSERT_TRUE(q.submit(item(4)).ok());  // default level 2
  ASSERT_TRUE(q.submit(item(5, 1)).ok());
  EXPECT_EQ(q.pending(), 4u);
  gate.open();
  ASSERT_TRUE(gate.wait_started(5));
  q.stop();
  EXPECT_EQ(gate.batches(), std::vector<Ids>({{1}, {3}, {5}, {2}, {4}}));
  EXPECT_EQ(q.direct_batches(), 5u) << "the worker took the queued requests itself";
}

// With dynamic batching, what queued while the instance was busy runs as one batch, capped at
// max_batch_size, in arrival order.
TEST(BatchQueueDirect, FinishingWorkerTakesAFullBatchInOrder) {
  FakeClock clock;
  Gate gate(false);
  BatcherConfig c;
  c.max_batch_size = 3;
  BatchQueue q(c, 1, &clock, gate.execute(), ignore_reject);
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  ASSERT_TRUE(gate.wait_started(1));
  gate.open();
  q.stop();
  EXPECT_EQ(gate.batches(), std::vector<Ids>({{1}, {2, 3, 4}, {5}}));
}

// A queue timeout that is due is answered by the scheduler thread, never by the direct path
// (submit() must not call the RejectFn); the request behind it still runs.
TEST(BatchQueueDirect, DueTimeoutsAreLeftToTheScheduler) {
  FakeClock clock;
  Gate gate(false);
  BatcherConfig c = no_batching();
  c.default_policy.default_timeout_us = 100;
  std::mutex mu;
  std::map<uint64_t, std::thread::id> rejected_on;
  BatchQueue q(c, 1, &clock, gate.execute(), [&](uint64_t id, Status why) {
    EXPECT_EQ(why.code(), StatusCode::kUnavailable);
    std::lock_guard<std::mutex> lock(mu);
    rejected_on[id] = std::this_thread::get_id();
  });
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(gate.wait_started(1));
  ASSERT_TRUE(q.submit(item(2)).ok());  // waits: the instance is busy
  clock.advance_us(100);                // item 2's timeout is due
  gate.open();
  ASSERT_TRUE(q.submit(item(3)).ok());
  q.stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(rejected_on.count(2), 1u);
  EXPECT_NE(rejected_on[2], std::this_thread::get_id()) << "submit() answered a timeout";
  EXPECT_EQ(gate.batches(), std::vector<Ids>({{1}, {3}}));
}

// While every instance is busy, requests queue without waking the scheduler (the worker takes
// them itself when it finishes), unless one brings a queue timeout the scheduler must answer.
TEST(BatchQueueDirect, BusyInstancesDoNotWakeTheSchedulerPerRequest) {
  FakeClock clock;
  Gate gate(false);
  BatcherConfig c = no_batching();
  c.default_policy.allow_timeout_override = true;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint64_t> rejected;
  BatchQueue q(c, 1, &clock, gate.execute(), [&](uint64_t id, Status why) {
    EXPECT_EQ(why.code(), StatusCode::kUnavailable);
    std::lock_guard<std::mutex> lock(mu);
    rejected.push_back(id);
    cv.notify_all();
  });
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(gate.wait_started(1));
  std::this_thread::sleep_for(20ms);  // the scheduler is asleep
  const uint64_t passes = q.scheduler_passes();
  for (uint64_t id = 2; id <= 51; ++id) {
    ASSERT_TRUE(q.submit(item(id)).ok());
    std::this_thread::sleep_for(1ms);  // time for a woken scheduler to make its pass
  }
  EXPECT_LE(q.scheduler_passes() - passes, 2u) << "the scheduler woke up per queued request";
  PendingItem timed = item(52);
  timed.timeout_us = 100;
  ASSERT_TRUE(q.submit(timed).ok());
  clock.advance_us(100);
  q.wake();
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return !rejected.empty(); }));
    EXPECT_EQ(rejected, std::vector<uint64_t>({52}));
  }
  gate.open();
  q.stop();
  const std::vector<Ids> batches = gate.batches();
  ASSERT_EQ(batches.size(), 51u);
  for (uint64_t i = 0; i < 51; ++i) EXPECT_EQ(batches[i], Ids({i + 1}));
}

// Many threads submitting to a non-batching model with several instances: every request runs
// exactly once, never two batches at once on one instance.
TEST(BatchQueueDirect, ConcurrentSubmittersLoseNothing) {
  const auto r = testing::run_concurrent_submitters(no_batching(), 3, 6, 500);
  testing::expect_each_ran_once(r, 6 * 500);
  EXPECT_EQ(r.largest_batch, 1u);
  EXPECT_GT(r.direct_batches, 0u);
}

// stop() while a directly dispatched batch runs: it waits for that batch and for what queued
// behind it, then refuses new work.
TEST(BatchQueueDirect, StopWaitsForDirectWorkInFlight) {
  FakeClock clock;
  Gate gate(false);
  BatchQueue q(no_batching(), 1, &clock, gate.execute(), ignore_reject);
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(gate.wait_started(1));
  ASSERT_TRUE(q.submit(item(2)).ok());
  ASSERT_TRUE(q.submit(item(3)).ok());
  std::atomic<bool> stopped{false};
  std::thread stopper([&] {
    q.stop();
    stopped = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(stopped) << "stop() returned while a batch was still running";
  EXPECT_EQ(q.submit(item(4)).code(), StatusCode::kUnavailable);
  gate.open();
  stopper.join();
  EXPECT_EQ(gate.batches(), std::vector<Ids>({{1}, {2}, {3}}));
  EXPECT_EQ(q.pending(), 0u);
}

// An idle queue sleeps: neither the scheduler nor the workers wake up without work.
TEST(BatchQueueDirect, IdleQueueDoesNotWakeUp) {
  SystemClock clock;
  std::atomic<int> runs{0};
  BatchQueue q(
      no_batching(), 2, &clock, [&](int, Ids) { ++runs; }, ignore_reject);
  ASSERT_TRUE(q.submit(item(1)).ok());
  std::this_thread::sleep_for(50ms);
  const uint64_t passes = q.scheduler_passes();
  const uint64_t direct = q.direct_batches();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(q.scheduler_passes(), passes);
  EXPECT_EQ(q.direct_batches(), direct);
  EXPECT_EQ(runs.load(), 1);
}

}  // namespace
}  // namespace osprey::server::scheduler
