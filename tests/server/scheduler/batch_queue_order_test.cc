// BatchQueue with preserve_ordering: answers leave in arrival order whatever order the batches
// finish in; timeouts, failed batches and shutdown keep to that order too.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "scheduler/batch_queue.h"

namespace osprey::server::scheduler {
namespace {

using Ids = std::vector<uint64_t>;
using namespace std::chrono_literals;

PendingItem item(uint64_t id, int64_t timeout_us = 0) {
  PendingItem p;
  p.id = id;
  p.shape_key = std::string(1, 'k');
  p.timeout_us = timeout_us;
  return p;
}

// Batches are sent when they hold `max_batch` requests (the delay never passes on a FakeClock).
BatcherConfig full_batches(int max_batch, bool preserve_ordering) {
  BatcherConfig c;
  c.max_batch_size = max_batch;
  c.max_queue_delay_us = 1'000'000'000;
  c.preserve_ordering = preserve_ordering;
  c.default_policy.allow_timeout_override = true;  // item(id, timeout) sets the timeout
  return c;
}

// A fake backend: a batch whose first id is held waits until the test opens it; a batch with a
// failing id throws; a skipped id is left unanswered. Every answer goes through deliver().
class GatedBackend {
 public:
  void hold(uint64_t id) { set(held_, id); }
  void fail(uint64_t id) { set(failing_, id); }
  void skip(uint64_t id) { set(skipped_, id); }
  void open(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    held_.erase(id);
    cv_.notify_all();
  }
  void open_all() {
    std::lock_guard<std::mutex> lock(mu_);
    held_.clear();
    cv_.notify_all();
  }

  BatchQueue::ExecuteFn execute(BatchQueue** queue) {
    return [this, queue](int, Ids ids) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        started_.insert(ids.begin(), ids.end());
        cv_.notify_all();
        cv_.wait(lock, [&] { return held_.count(ids.front()) == 0; });
      }
      for (uint64_t id : ids) {
        if (contains(failing_, id)) {
          finish(ids);
          throw std::runtime_error("backend exploded");
        }
      }
      for (uint64_t id : ids) {
        if (contains(skipped_, id)) continue;
        const Status s = (*queue)->deliver(id, [this, id] { record(id, Status::Ok()); });
        EXPECT_TRUE(s.ok()) << s.to_string();
      }
      finish(ids);
    };
  }
  BatchQueue::RejectFn reject() {
    return [this](uint64_t id, Status why) { record(id, std::move(why)); };
  }

  bool wait_started(uint64_t id) {
    return wait([&] { return started_.count(id) != 0; });
  }
  bool wait_executed(uint64_t id) {
    return wait([&] { return executed_.count(id) != 0; });
  }
  bool wait_sent(size_t n) {
    return wait([&] { return sent_.size() >= n; });
  }
  Ids sent() {
    std::lock_guard<std::mutex> lock(mu_);
    return sent_;
  }
  std::map<uint64_t, Status> errors() {
    std::lock_guard<std::mutex> lock(mu_);
    return errors_;
  }

 private:
  void set(std::set<uint64_t>& s, uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    s.insert(id);
  }
  bool contains(const std::set<uint64_t>& s, uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    return s.count(id) != 0;
  }
  void finish(const Ids& ids) {
    std::lock_guard<std::mutex> lock(mu_);
    executed_.insert(ids.begin(), ids.end());
    cv_.notify_all();
  }
  void record(uint64_t id, Status why) {
    std::lock_guard<std::mutex> lock(mu_);
    sent_.push_back(id);
    if (!why.ok()) errors_[id] = std::move(why);
    cv_.notify_all();
  }
  template <typename Pred>
  bool wait(Pred pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 10s, pred);
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::set<uint64_t> held_, failing_, skipped_, started_, executed_;
  Ids sent_;
  std::map<uint64_t, Status> errors_;
};

// Declared after the queue: when a failed ASSERT leaves the test early, held batches are let go
// before the queue's destructor waits for them.
struct OpenAllOnExit {
  GatedBackend& backend;
  ~OpenAllOnExit() { backend.open_all(); }
};

// A queue of `instances` workers over a GatedBackend and a FakeClock. Members go in reverse
// order: the gates open before the queue stops, so no worker is left waiting on one.
struct GatedQueue {
  GatedQueue(const BatcherConfig& config, int instances)
      : q(config, instances, &clock, backend.execute(&qp), backend.reject()) {
    qp = &q;
  }
  FakeClock clock;
  GatedBackend backend;
  BatchQueue* qp = nullptr;
  BatchQueue q;
  OpenAllOnExit guard{backend};
};

bool wait_until_empty(const BatchQueue& q) {
  for (int i = 0; i < 10'000 && q.pending() != 0; ++i) std::this_thread::sleep_for(1ms);
  return q.pending() == 0;
}

// Batch A = {1, 2} arrives first and runs slowly on instance 0; batch B = {3, 4} finishes first
// on instance 1. Returns what had been sent when B finished, and everything at the end.
std::pair<Ids, Ids> slow_first_batch(bool preserve_ordering) {
  GatedQueue g(full_batches(2, preserve_ordering), 2);
  BatchQueue& q = g.q;
  GatedBackend& backend = g.backend;
  backend.hold(1);
  EXPECT_TRUE(q.submit(item(1)).ok());
  EXPECT_TRUE(q.submit(item(2)).ok());
  EXPECT_TRUE(backend.wait_started(1));
  EXPECT_TRUE(q.submit(item(3)).ok());
  EXPECT_TRUE(q.submit(item(4)).ok());
  EXPECT_TRUE(backend.wait_executed(4));
  if (!preserve_ordering) {
    EXPECT_TRUE(backend.wait_sent(2));
  }
  std::this_thread::sleep_for(20ms);  // a held answer that leaked would show up now
  const Ids after_b = backend.sent();
  backend.open(1);
  EXPECT_TRUE(backend.wait_sent(4));
  q.stop();
  EXPECT_TRUE(backend.errors().empty());
  return {after_b, backend.sent()};
}

TEST(BatchQueueOrder, LaterBatchWaitsForTheSlowEarlierOne) {
  const auto [after_b, all] = slow_first_batch(/*preserve_ordering=*/true);
  EXPECT_TRUE(after_b.empty()) << "B's answers left before A's";
  EXPECT_EQ(all, Ids({1, 2, 3, 4}));
}

TEST(BatchQueueOrder, WithoutTheOptionTheFasterBatchAnswersFirst) {
  const auto [after_b, all] = slow_first_batch(/*preserve_ordering=*/false);
  EXPECT_EQ(after_b, Ids({3, 4}));
  EXPECT_EQ(all, Ids({3, 4, 1, 2}));
}

TEST(BatchQueueOrder, FailuresAndTimeoutsKeepTheirPlace) {
  GatedQueue g(full_batches(2, true), 2);
  FakeClock& clock = g.clock;
  BatchQueue& q = g.q;
  GatedBackend& backend = g.backend;
  backend.hold(1);
  backend.fail(3);
  backend.skip(6);
  ASSERT_TRUE(q.submit(item(1)).ok());  // {1, 2} waits on instance 0
  ASSERT_TRUE(q.submit(item(2)).ok());
  ASSERT_TRUE(backend.wait_started(1));
  ASSERT_TRUE(q.submit(item(3)).ok());  // {3, 4} throws on instance 1
  ASSERT_TRUE(q.submit(item(4)).ok());
  ASSERT_TRUE(backend.wait_executed(4));
  ASSERT_TRUE(q.submit(item(5, /*timeout_us=*/100)).ok());  // times out in the queue
  clock.advance_us(100);
  q.wake();
  ASSERT_TRUE(wait_until_empty(q));
  ASSERT_TRUE(q.submit(item(6)).ok());  // {6, 7}: the backend answers 7 only
  ASSERT_TRUE(q.submit(item(7)).ok());
  ASSERT_TRUE(backend.wait_executed(7));
  std::this_thread::sleep_for(20ms);
  EXPECT_TRUE(backend.sent().empty()) << "an answer left before request 1's";

  backend.open(1);
  ASSERT_TRUE(backend.wait_sent(7));
  EXPECT_EQ(backend.sent(), Ids({1, 2, 3, 4, 5, 6, 7}));
  const auto errors = backend.errors();
  ASSERT_EQ(errors.size(), 4u);
  for (uint64_t id : {3, 4}) {
    EXPECT_EQ(errors.at(id).code(), StatusCode::kInternal);
    EXPECT_NE(errors.at(id).message().find("backend exploded"), std::string::npos);
  }
  EXPECT_EQ(errors.at(5).code(), StatusCode::kUnavailable);
  EXPECT_NE(errors.at(5).message().find("timed out"), std::string::npos);
  EXPECT_EQ(errors.at(6).code(), StatusCode::kInternal);
  EXPECT_NE(errors.at(6).message().find("without answering request 6"), std::string::npos);
  q.stop();
}

TEST(BatchQueueOrder, RefusedRequestsAreAnsweredAtOnceOutsideTheOrder) {
  BatcherConfig c = full_batches(2, true);
  c.max_queue_size = 2;
  GatedQueue g(c, 1);
  BatchQueue& q = g.q;
  GatedBackend& backend = g.backend;
  backend.hold(1);
  ASSERT_TRUE(q.submit(item(1)).ok());
  ASSERT_TRUE(q.submit(item(2)).ok());  // {1, 2} waits on the only instance
  ASSERT_TRUE(backend.wait_started(1));
  ASSERT_TRUE(q.submit(item(3)).ok());  // queued while the instance is busy
  ASSERT_TRUE(q.submit(item(4)).ok());
  EXPECT_EQ(q.submit(item(5)).code(), StatusCode::kUnavailable) << "queue full";
  EXPECT_EQ(q.submit(item(2)).code(), StatusCode::kInvalidArgument)
      << "2 still waits for its answer to be sent";
  EXPECT_EQ(q.deliver(99, [] {}).code(), StatusCode::kNotFound);
  backend.open(1);
  q.stop();  // runs {3, 4}
  EXPECT_EQ(backend.sent(), Ids({1, 2, 3, 4}));
}

TEST(BatchQueueOrder, StopReleasesEveryHeldAnswer) {
  GatedQueue g(full_batches(2, true), 2);
  BatchQueue& q = g.q;
  GatedBackend& backend = g.backend;
  backend.hold(1);
  for (uint64_t id = 1; id <= 2; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  ASSERT_TRUE(backend.wait_started(1));
  for (uint64_t id = 3; id <= 4; ++id) ASSERT_TRUE(q.submit(item(id)).ok());
  ASSERT_TRUE(backend.wait_executed(4));  // 3 and 4 are held behind 1
  ASSERT_TRUE(q.submit(item(5)).ok());    // waits for a delay that never passes
  std::thread opener([&] {
    std::this_thread::sleep_for(50ms);
    backend.open(1);
  });
  q.stop();  // waits for {1, 2}, flushes 5
  opener.join();
  EXPECT_EQ(backend.sent(), Ids({1, 2, 3, 4, 5}));
  EXPECT_TRUE(backend.errors().empty());
}

// Many submitters, three instances, batches of uneven length: answers leave in the order the
// queue took the requests. That order is not visible from outside, but it shows: each thread's
// requests are answered in the order it submitted them, and each batch (a run of consecutive
// arrivals, as there is one FIFO level and one shape) is answered as one unbroken run.
TEST(BatchQueueOrder, ConcurrentSubmittersAreAnsweredInArrivalOrder) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 250;
  constexpr size_t kRequests = kThreads * kPerThread;
  SystemClock clock;
  BatcherConfig c;
  c.max_batch_size = 4;
  c.max_queue_delay_us = 100;
  c.preserve_ordering = true;
  c.max_queue_size = kRequests;
  std::mutex mu;
  Ids sent;
  std::vector<Ids> batches;
  BatchQueue* qp = nullptr;
  auto execute = [&](int, Ids ids) {
    {
      std::lock_guard<std::mutex> lock(mu);
      batches.push_back(ids);
    }
    // Every third batch is slow, so later batches finish first on the other instances.
    if (ids.front() % 3 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    for (uint64_t id : ids) {
      const Status s = qp->deliver(id, [&, id] {
        std::lock_guard<std::mutex> lock(mu);
        sent.push_back(id);
      });
      EXPECT_TRUE(s.ok()) << s.to_string();
    }
  };
  std::atomic<int> rejects{0};
  BatchQueue q(c, 3, &clock, execute, [&](uint64_t, Status) { ++rejects; });
  qp = &q;
  std::vector<std::thread> submitters;
  for (int t = 0; t < kThreads; ++t) {
    submitters.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const Status s = q.submit(item(static_cast<uint64_t>(t) * kPerThread + i + 1));
        EXPECT_TRUE(s.ok()) << s.to_string();
      }
    });
  }
  for (auto& th : submitters) th.join();
  q.stop();
  EXPECT_EQ(rejects, 0);
  ASSERT_EQ(sent.size(), kRequests);
  std::map<uint64_t, size_t> pos;
  for (size_t i = 0; i < sent.size(); ++i) pos[sent[i]] = i;
  ASSERT_EQ(pos.size(), kRequests) << "an id was answered twice";
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 1; i < kPerThread; ++i) {
      const uint64_t id = static_cast<uint64_t>(t) * kPerThread + i + 1;
      ASSERT_LT(pos.at(id - 1), pos.at(id)) << "thread " << t << " request " << i;
    }
  }
  for (const Ids& b : batches) {
    for (size_t k = 1; k < b.size(); ++k) {
      ASSERT_EQ(pos.at(b[k]), pos.at(b[k - 1]) + 1) << "batch starting at " << b.front();
    }
  }
}

TEST(BatchQueueOrder, WithoutTheOptionDeliverSendsAtOnce) {
  FakeClock clock;
  BatchQueue q(
      full_batches(2, false), 1, &clock, [](int, Ids) {}, [](uint64_t, Status) {});
  EXPECT_FALSE(q.preserves_order());
  bool sent = false;
  EXPECT_TRUE(q.deliver(42, [&] { sent = true; }).ok());
  EXPECT_TRUE(sent);
}

}  // namespace
}  // namespace osprey::server::scheduler
