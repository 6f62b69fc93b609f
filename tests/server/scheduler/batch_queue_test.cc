#include "scheduler/batch_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "concurrent_submitters.h"

namespace osprey::server::scheduler {
namespace {

using Ids = std::vector<uint64_t>;
using namespace std::chrono_literals;

PendingItem item(uint64_t id, int rows = 1, int64_t timeout_us = 0) {
  PendingItem p;
  p.id = id;
  p.batch_size = rows;
  p.shape_key = std::string(1, 'k');  // (GCC 12 warns falsely on = "k", PR105329)
  p.timeout_us = timeout_us;
  return p;
}

BatcherConfig batching(int max_batch, int64_t delay_us) {
  BatcherConfig c;
  c.max_batch_size = max_batch;
  c.max_queue_delay_us = delay_us;
  return c;
}

// Records what the queue did; waits (generously) for it to happen.
class Recorder {
 public:
  BatchQueue::ExecuteFn execute() {
    return [this](int instance, Ids ids) {
      std::lock_guard<std::mutex> lock(mu_);
      batches_.push_back(ids);
      instances_.push_back(instance);
      for (uint64_t id : ids) ++done_[id];
      cv_.notify_all();
    };
  }
  BatchQueue::RejectFn reject() {
    return [this](uint64_t id, Status why) {
      std::lock_guard<std::mutex> lock(mu_);
      rejected_[id] = why;
      ++done_[id];
      cv_.notify_all();
    };
  }
  // True once `n` distinct ids have been answered (executed or rejected).
  bool wait_answered(size_t n, std::chrono::milliseconds limit = 10s) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, limit, [&] { return done_.size() >= n; });
  }
  std::vector<Ids> batches() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  std::map<uint64_t, Status> rejected() {
    std::lock_guard<std::mutex> lock(mu_);
    return rejected_;
  }
  std::map<uint64_t, int> done() {
    std::lock_guard<std::mutex> lock(mu_);
    return done_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Ids> batches_;
  std::vector<int> instances_;
  std::map<uint64_t, Status> rejected_;
  std::map<uint64_t, int> done_;
};

TEST(BatchQueue, WaitsForTheDelayOnTheInjectedClock) {
  FakeClock clock(1000);
  Recorder rec;
  BatchQueue q(batching(8, 500), 1, &clock, rec.execute(), rec.reject());
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(q.submit(item(2, 3)).ok());
  EXPECT_FALSE(rec.wait_answered(1, 50ms)) << "ran before the fake clock reached the delay";
  clock.advance_us(499);
  q.wake();
  EXPECT_FALSE(rec.wait_answered(1, 50ms));
  clock.advance_us(1);
  q.wake();
  ASSERT_TRUE(rec.wait_answered(2));
  EXPECT_EQ(rec.batches(), std::vector<Ids>({{1, 2}}));
  EXPECT_EQ(q.pending(), 0u);
}

TEST(BatchQueue, FullBatchRunsWithoutWaiting) {
  FakeClock clock;
  Recorder rec;
  BatchQueue q(batching(3, 1'000'000), 2, &clock, rec.execute(), rec.reject());
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  ASSERT_TRUE(rec.wait_answered(3));
  EXPECT_EQ(rec.batches(), std::vector<Ids>({{1, 2, 3}}));
}

TEST(BatchQueue, TimedOutRequestsAreRejected) {
  FakeClock clock;
  Recorder rec;
  BatcherConfig c = batching(8, 1'000'000);
  c.default_policy.default_timeout_us = 100;
  BatchQueue q(c, 1, &clock, rec.execute(), rec.reject());
  ASSERT_TRUE(q.submit(item(7)).ok());
  clock.advance_us(100);
  q.wake();
  ASSERT_TRUE(rec.wait_answered(1));
  const auto rejected = rec.rejected();
  ASSERT_EQ(rejected.count(7), 1u);
  EXPECT_EQ(rejected.at(7).code(), StatusCode::kUnavailable);
  EXPECT_NE(rejected.at(7).message().find("timed out"), std::string::npos);
  EXPECT_TRUE(rec.batches().empty());
}

TEST(BatchQueue, StopFinishesQueuedWorkThenRefusesNew) {
  FakeClock clock;
  Recorder rec;
  BatchQueue q(batching(2, 1'000'000'000), 1, &clock, rec.execute(), rec.reject());
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  q.stop();  // the fake clock never reaches the delay: stop must flush anyway
  const auto done = rec.done();
  EXPECT_EQ(done.size(), 5u);
  EXPECT_TRUE(rec.rejected().empty());
  size_t rows = 0;
  for (const Ids& b : rec.batches()) {
    EXPECT_LE(b.size(), 2u);
    rows += b.size();
  }
  EXPECT_EQ(rows, 5u);
  const Status s = q.submit(item(9));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("shutting down"), std::string::npos);
  q.stop();  // idempotent
}

TEST(BatchQueue, BatchGrowsWhileTheOnlyInstanceIsBusy) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  bool first_started = false;
  std::vector<Ids> batches;
  auto execute = [&](int, Ids ids) {
    std::unique_lock<std::mutex> lock(mu);
    batches.push_back(ids);
    first_started = true;
    cv.notify_all();
    cv.wait(lock, [&] { return release; });
  };
  BatchQueue q(batching(8, 0), 1, &clock, execute, [](uint64_t, Status) {});
  ASSERT_TRUE(q.submit(item(1)).ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return first_started; }));
  }
  for (uint64_t id = 2; id <= 4; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
    cv.notify_all();
  }
  q.stop();
  EXPECT_EQ(batches, std::vector<Ids>({{1}, {2, 3, 4}}));
}

TEST(BatchQueue, ConcurrentSubmitLosesNothing) {
  const auto r = testing::run_concurrent_submitters(batching(8, 200), 3, 8, 500);
  testing::expect_each_ran_once(r, 8 * 500);
  EXPECT_LE(r.largest_batch, 8u);
}

// The scheduler sleeps until something can happen: a queue waiting for a long batching delay, or
// an idle one, does not wake up over and over (busy polling would make thousands of passes).
TEST(BatchQueue, WaitingDoesNotSpin) {
  SystemClock clock;
  Recorder rec;
  BatchQueue q(batching(8, 60'000'000), 2, &clock, rec.execute(), rec.reject());
  ASSERT_TRUE(q.submit(item(1)).ok());  // waits for a 60 s delay
  std::this_thread::sleep_for(50ms);
  uint64_t before = q.scheduler_passes();
  std::this_thread::sleep_for(300ms);
  EXPECT_LE(q.scheduler_passes() - before, 2u) << "woke up while waiting for the delay";
  q.stop();
  EXPECT_EQ(rec.batches(), std::vector<Ids>({{1}}));

  BatchQueue idle(batching(8, 0), 1, &clock, rec.execute(), rec.reject());
  std::this_thread::sleep_for(50ms);
  before = idle.scheduler_passes();
  std::this_thread::sleep_for(300ms);
  EXPECT_LE(idle.scheduler_passes() - before, 2u) << "woke up while idle";
}

TEST(BatchQueue, SubmitErrorsAreSynchronous) {
  FakeClock clock;
  Recorder rec;
  BatcherConfig c = batching(2, 1000);
  c.max_queue_size = 1;
  BatchQueue q(c, 1, &clock, rec.execute(), rec.reject());
  EXPECT_EQ(q.submit(item(1, 3)).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(q.submit(item(1)).ok());
  const Status s = q.submit(item(2));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("queue full"), std::string::npos);
}

TEST(BatchQueue, BadSetupRefusesEverySubmit) {
  FakeClock clock;
  Recorder rec;
  BatchQueue no_instances(batching(2, 0), 0, &clock, rec.execute(), rec.reject());
  Status s = no_instances.submit(item(1));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("num_instances"), std::string::npos);
  BatchQueue bad_config(batching(-1, 0), 1, &clock, rec.execute(), rec.reject());
  s = bad_config.submit(item(1));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("max_batch_size"), std::string::npos);
}

TEST(BatchQueue, ThrowingExecuteRejectsItsBatch) {
  FakeClock clock;
  Recorder rec;
  auto execute = [](int, Ids) { throw std::runtime_error("backend exploded"); };
  BatchQueue q(batching(2, 0), 1, &clock, execute, rec.reject());
  ASSERT_TRUE(q.submit(item(1, 2)).ok());
  ASSERT_TRUE(rec.wait_answered(1));
  const auto rejected = rec.rejected();
  ASSERT_EQ(rejected.count(1), 1u);
  EXPECT_EQ(rejected.at(1).code(), StatusCode::kInternal);
  EXPECT_NE(rejected.at(1).message().find("backend exploded"), std::string::npos);
  ASSERT_TRUE(q.submit(item(2)).ok()) << "the instance keeps serving";
  ASSERT_TRUE(rec.wait_answered(2));
}

}  // namespace
}  // namespace osprey::server::scheduler
