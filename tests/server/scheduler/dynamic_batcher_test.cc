#include "scheduler/dynamic_batcher.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace osprey::server::scheduler {
namespace {

using Ids = std::vector<uint64_t>;

PendingItem item(uint64_t id, int64_t at_us, int rows = 1, std::string key = "k", int priority = 0,
                 int64_t timeout_us = 0) {
  PendingItem p;
  p.id = id;
  p.batch_size = rows;
  p.shape_key = std::move(key);
  p.priority = priority;
  p.timeout_us = timeout_us;
  p.enqueue_us = at_us;
  return p;
}

BatcherConfig batching(int max_batch, int64_t delay_us, std::vector<int> preferred = {}) {
  BatcherConfig c;
  c.max_batch_size = max_batch;
  c.max_queue_delay_us = delay_us;
  c.preferred_batch_sizes = std::move(preferred);
  return c;
}

void expect_invalid(const BatcherConfig& c, const std::string& field) {
  const Status s = DynamicBatcher::validate(c);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << field;
  EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
}

TEST(DynamicBatcherConfig, ValidatesEveryField) {
  EXPECT_TRUE(DynamicBatcher::validate(batching(8, 100, {2, 4})).ok());
  expect_invalid(batching(-1, 0), "max_batch_size");
  expect_invalid(batching(0, 0, {1}), "preferred_batch_sizes");
  expect_invalid(batching(8, 0, {16}), "preferred_batch_sizes[0]");
  expect_invalid(batching(8, 0, {0}), "preferred_batch_sizes[0]");
  expect_invalid(batching(8, 0, {4, 2}), "strictly ascending");
  expect_invalid(batching(8, 0, {4, 4}), "strictly ascending");
  expect_invalid(batching(8, -5), "max_queue_delay_us");
  BatcherConfig c = batching(8, 0);
  c.priority_levels = -1;
  expect_invalid(c, "priority_levels");
  c.priority_levels = 3;
  c.default_priority_level = 0;
  expect_invalid(c, "default_priority_level");
  c.default_priority_level = 4;
  expect_invalid(c, "default_priority_level");
  c.default_priority_level = 2;
  EXPECT_TRUE(DynamicBatcher::validate(c).ok());
  c.priority_policies[4] = QueuePolicy{};
  expect_invalid(c, "priority_policies has level 4");
  c.priority_policies.clear();
  c.priority_policies[2].default_timeout_us = -1;
  expect_invalid(c, "priority_policies[2].default_timeout_us");
  c.priority_policies.clear();
  c.default_policy.max_queue_size = -1;
  expect_invalid(c, "default_policy.max_queue_size");
  c.default_policy.max_queue_size = 0;
  c.max_queue_size = 0;
  expect_invalid(c, "max_queue_size must be >= 1");
  BatcherConfig no_levels = batching(8, 0);
  no_levels.default_priority_level = 1;
  expect_invalid(no_levels, "default_priority_level");
}

TEST(DynamicBatcherConfig, InvalidConfigRefusesWork) {
  DynamicBatcher b(batching(4, 0, {8}));
  const Status s = b.enqueue(item(1, 0));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("preferred_batch_sizes"), std::string::npos) << s.message();
  EXPECT_EQ(b.pending(), 0u);
}

TEST(DynamicBatcher, NonBatchingModelRunsEachRequestAloneAtOnce) {
  DynamicBatcher b(batching(0, 1000));
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(3, 0, 5)).ok());  // dim 0 is not a batch: still alone
  Decision d = b.poll(0);
  EXPECT_EQ(d.batch, Ids({1}));
  EXPECT_EQ(d.wake_at_us, 0);  // more is ready now
  EXPECT_EQ(b.poll(0).batch, Ids({2}));
  d = b.poll(0);
  EXPECT_EQ(d.batch, Ids({3}));
  EXPECT_EQ(d.wake_at_us, -1);
  EXPECT_TRUE(b.poll(0).batch.empty());
}

TEST(DynamicBatcher, SendsAtOnceWhenMaxBatchSizeIsReached) {
  DynamicBatcher b(batching(4, 1'000'000));
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_TRUE(b.enqueue(item(id, 10)).ok());
    EXPECT_TRUE(b.poll(10).batch.empty());
  }
  ASSERT_TRUE(b.enqueue(item(4, 10)).ok());
  const Decision d = b.poll(10);
  EXPECT_EQ(d.batch, Ids({1, 2, 3, 4}));
  EXPECT_EQ(d.wake_at_us, -1);
  EXPECT_EQ(b.pending(), 0u);
}

TEST(DynamicBatcher, WaitsForTheOldestRequestsDelayThenSendsWhatItHas) {
  DynamicBatcher b(batching(8, 100));
  ASSERT_TRUE(b.enqueue(item(1, 1000)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 1050, 2)).ok());
  Decision d = b.poll(1050);
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake_at_us, 1100);  // oldest (t=1000) + 100
  d = b.poll(1099);
  EXPECT_TRUE(d.batch.empty());
  d = b.poll(1100);
  EXPECT_EQ(d.batch, Ids({1, 2}));
  EXPECT_EQ(d.wake_at_us, -1);
}

TEST(DynamicBatcher, ZeroDelaySendsWhateverIsPending) {
  DynamicBatcher b(batching(8, 0));
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  EXPECT_EQ(b.poll(0).batch, Ids({1}));
}

TEST(DynamicBatcher, LargestPreferredSizeIsSentAtOnce) {
  DynamicBatcher b(batching(8, 1'000'000, {2, 4}));
  for (uint64_t id = 1; id <= 5; ++id) ASSERT_TRUE(b.enqueue(item(id, 0)).ok());
  Decision d = b.poll(0);
  EXPECT_EQ(d.batch, Ids({1, 2, 3, 4}));  // 4 is the largest preferred size: no growing
  EXPECT_EQ(d.wake_at_us, 1'000'000);     // id 5 waits for its delay
  EXPECT_EQ(b.pending(), 1u);
}

TEST(DynamicBatcher, SmallerPreferredSizeWaitsToGrowThenSendsTheLargestPreferredPrefix) {
  DynamicBatcher b(batching(8, 100, {2, 4}));
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(b.enqueue(item(id, 0)).ok());
  Decision d = b.poll(50);
  EXPECT_TRUE(d.batch.empty()) << "3 rows could still grow to the preferred 4";
  EXPECT_EQ(d.wake_at_us, 100);
  d = b.poll(100);
  EXPECT_EQ(d.batch, Ids({1, 2}));  // largest preferred size a prefix makes
  EXPECT_EQ(d.wake_at_us, 100);     // id 3's own delay has passed too: poll again now
  d = b.poll(100);
  EXPECT_EQ(d.batch, Ids({3}));  // no prefix is preferred: everything that fits
}

TEST(DynamicBatcher, NoPreferredPrefixAfterDelaySendsEverythingThatFits) {
  DynamicBatcher b(batching(8, 100, {4}));
  ASSERT_TRUE(b.enqueue(item(1, 0, 3)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 2)).ok());
  EXPECT_TRUE(b.poll(99).batch.empty());
  EXPECT_EQ(b.poll(100).batch, Ids({1, 2}));
}

TEST(DynamicBatcher, RequestThatDoesNotFitWaitsForTheNextBatch) {
  DynamicBatcher b(batching(4, 1000));
  ASSERT_TRUE(b.enqueue(item(1, 0, 3)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 2)).ok());  // 3 + 2 > 4
  ASSERT_TRUE(b.enqueue(item(3, 0, 1)).ok());  // would fit, but must not overtake id 2
  Decision d = b.poll(0);
  EXPECT_EQ(d.batch, Ids({1})) << "the batch cannot grow past id 2: sent without waiting";
  EXPECT_EQ(d.wake_at_us, 1000);
  d = b.poll(1000);
  EXPECT_EQ(d.batch, Ids({2, 3}));
}

TEST(DynamicBatcher, NeverMixesShapeKeys) {
  DynamicBatcher b(batching(8, 100));
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "A")).ok());
  ASSERT_TRUE(b.enqueue(item(2, 10, 1, "B")).ok());
  ASSERT_TRUE(b.enqueue(item(3, 20, 1, "A")).ok());
  ASSERT_TRUE(b.enqueue(item(4, 30, 1, "B")).ok());
  Decision d = b.poll(100);
  EXPECT_EQ(d.batch, Ids({1, 3}));  // the oldest request's key; the B requests wait
  EXPECT_EQ(d.wake_at_us, 110);     // oldest B (t=10) + 100
  EXPECT_TRUE(b.poll(109).batch.empty());
  EXPECT_EQ(b.poll(110).batch, Ids({2, 4}));
}

TEST(DynamicBatcher, MaxBatchOfOneShapeDoesNotWaitForOtherShapes) {
  DynamicBatcher b(batching(2, 1000));
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "A")).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 1, "B")).ok());
  ASSERT_TRUE(b.enqueue(item(3, 0, 1, "A")).ok());
  EXPECT_EQ(b.poll(0).batch, Ids({1, 3}));
}

TEST(DynamicBatcher, HighestPriorityFirstFifoWithinALevel) {
  BatcherConfig c = batching(2, 0);
  c.priority_levels = 3;
  c.default_priority_level = 2;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "k", 3)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 1, 1, "k", 0)).ok());  // default level 2
  ASSERT_TRUE(b.enqueue(item(3, 2, 1, "k", 1)).ok());
  ASSERT_TRUE(b.enqueue(item(4, 3, 1, "k", 3)).ok());
  ASSERT_TRUE(b.enqueue(item(5, 4, 1, "k", 1)).ok());
  EXPECT_EQ(b.pending_at_level(1), 2u);
  EXPECT_EQ(b.pending_at_level(2), 1u);
  EXPECT_EQ(b.pending_at_level(0), 1u);  // 0 = the default level
  EXPECT_EQ(b.pending_at_level(3), 2u);
  EXPECT_EQ(b.poll(10).batch, Ids({3, 5}));
  EXPECT_EQ(b.poll(10).batch, Ids({2, 1}));  // level 2, then fills from level 3
  EXPECT_EQ(b.poll(10).batch, Ids({4}));
}

TEST(DynamicBatcher, RejectsBadRequests) {
  BatcherConfig c = batching(4, 0);
  c.priority_levels = 2;
  c.default_priority_level = 1;
  DynamicBatcher b(c);
  Status s = b.enqueue(item(1, 0, 5));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_batch_size 4"), std::string::npos) << s.message();
  s = b.enqueue(item(1, 0, 0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("batch_size must be >= 1"), std::string::npos) << s.message();
  s = b.enqueue(item(1, 0, 1, "k", 3));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("priority 3 must be in [0, 2]"), std::string::npos) << s.message();
  s = b.enqueue(item(1, 0, 1, "k", -1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  s = b.enqueue(item(1, 0, 1, "k", 0, -5));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("timeout"), std::string::npos) << s.message();
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  s = b.enqueue(item(1, 0));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("already queued"), std::string::npos) << s.message();
  EXPECT_EQ(b.pending(), 1u);

  DynamicBatcher no_levels(batching(4, 0));
  s = no_levels.enqueue(item(1, 0, 1, "k", 1));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("no priority levels"), std::string::npos) << s.message();
}

TEST(DynamicBatcher, GlobalQueueCap) {
  BatcherConfig c = batching(8, 1000);
  c.max_queue_size = 2;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0)).ok());
  const Status s = b.enqueue(item(3, 0));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "queue full (2 pending, max_queue_size 2)");
  EXPECT_EQ(b.poll(1000).batch, Ids({1, 2}));
  EXPECT_TRUE(b.enqueue(item(3, 1000)).ok()) << "room again once a batch left";
}

TEST(DynamicBatcher, PerLevelQueueCap) {
  BatcherConfig c = batching(8, 1000);
  c.priority_levels = 2;
  c.default_priority_level = 2;
  c.priority_policies[1].max_queue_size = 1;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "k", 1)).ok());
  const Status s = b.enqueue(item(2, 0, 1, "k", 1));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(s.message(), "queue full (1 pending at priority level 1, max_queue_size 1)");
  EXPECT_TRUE(b.enqueue(item(3, 0, 1, "k", 2)).ok()) << "level 2 has no cap of its own";
  EXPECT_TRUE(b.enqueue(item(4, 0, 1, "k", 0)).ok());
}

TEST(DynamicBatcher, TimeoutRejectExpiresAndWakeAtPointsAtIt) {
  BatcherConfig c = batching(8, 1000);
  c.default_policy.default_timeout_us = 300;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 100)).ok());
  Decision d = b.poll(100);
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake_at_us, 300);  // id 1's timeout comes before the delay (1000)
  d = b.poll(300);
  EXPECT_EQ(d.expired, Ids({1}));
  EXPECT_TRUE(d.batch.empty());
  EXPECT_EQ(d.wake_at_us, 400);  // id 2's timeout
  d = b.poll(400);
  EXPECT_EQ(d.expired, Ids({2}));
  EXPECT_EQ(d.wake_at_us, -1);
  EXPECT_EQ(b.pending(), 0u);
}

TEST(DynamicBatcher, TimeoutDelayMovesTheRequestBehindAndItStillRuns) {
  BatcherConfig c = batching(0, 0);  // one request per batch, so the order is visible
  c.default_policy.timeout_action = QueuePolicy::TimeoutAction::kDelay;
  c.default_policy.default_timeout_us = 50;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 40)).ok());
  ASSERT_TRUE(b.enqueue(item(3, 45)).ok());
  Decision d = b.poll(60);  // id 1 timed out; 2 and 3 not yet
  EXPECT_TRUE(d.expired.empty());
  EXPECT_EQ(d.batch, Ids({2}));
  EXPECT_EQ(b.poll(60).batch, Ids({3}));
  EXPECT_EQ(b.poll(60).batch, Ids({1}));
}

TEST(DynamicBatcher, TimeoutOverrideMayOnlyShortenTheDefault) {
  BatcherConfig c = batching(8, 1'000'000);
  c.default_policy.default_timeout_us = 1000;
  c.default_policy.allow_timeout_override = true;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "k", 0, 100)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 1, "k", 0, 5000)).ok());
  EXPECT_EQ(b.next_timeout_us(), 100);
  EXPECT_EQ(b.poll(100).expired, Ids({1}));
  EXPECT_EQ(b.next_timeout_us(), 1000);
  EXPECT_EQ(b.poll(1000).expired, Ids({2}));

  c.default_policy.allow_timeout_override = false;
  DynamicBatcher fixed(c);
  ASSERT_TRUE(fixed.enqueue(item(1, 0, 1, "k", 0, 100)).ok());
  EXPECT_EQ(fixed.next_timeout_us(), 1000) << "override not allowed: the request's 100 is ignored";

  BatcherConfig no_default = batching(8, 1'000'000);
  no_default.default_policy.allow_timeout_override = true;
  DynamicBatcher only_request(no_default);
  ASSERT_TRUE(only_request.enqueue(item(1, 10, 1, "k", 0, 70)).ok());
  ASSERT_TRUE(only_request.enqueue(item(2, 10)).ok());
  EXPECT_EQ(only_request.next_timeout_us(), 80);
}

TEST(DynamicBatcher, PerLevelPolicies) {
  BatcherConfig c = batching(8, 1'000'000);
  c.priority_levels = 2;
  c.default_priority_level = 2;
  c.priority_policies[1].default_timeout_us = 10;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "k", 1)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 1, "k", 2)).ok());
  const Decision d = b.poll(10);
  EXPECT_EQ(d.expired, Ids({1}));
  EXPECT_EQ(b.pending(), 1u);
  EXPECT_EQ(b.next_timeout_us(), -1) << "level 2 uses the default policy: no timeout";
}

TEST(DynamicBatcher, PollWithoutDelayFlushes) {
  DynamicBatcher b(batching(8, 1'000'000, {4}));
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(b.enqueue(item(id, 0)).ok());
  EXPECT_TRUE(b.poll(0).batch.empty());
  EXPECT_EQ(b.poll_without_delay(0).batch, Ids({1, 2, 3}));
}

TEST(DynamicBatcher, ExpireAloneLeavesBatchesForming) {
  BatcherConfig c = batching(2, 0);
  c.default_policy.default_timeout_us = 5;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 3)).ok());
  EXPECT_EQ(b.expire(5), Ids({1}));
  EXPECT_EQ(b.pending(), 1u);
}

TEST(DynamicBatcher, DrainReturnsEverythingPending) {
  BatcherConfig c = batching(8, 1000);
  c.priority_levels = 2;
  c.default_priority_level = 2;
  DynamicBatcher b(c);
  ASSERT_TRUE(b.enqueue(item(1, 0, 1, "k", 2)).ok());
  ASSERT_TRUE(b.enqueue(item(2, 0, 1, "x", 1)).ok());
  EXPECT_EQ(b.drain(), Ids({2, 1}));
  EXPECT_EQ(b.pending(), 0u);
  EXPECT_EQ(b.poll(10'000).wake_at_us, -1);
  EXPECT_TRUE(b.enqueue(item(1, 0)).ok()) << "drained ids may be reused";
}

// Random traffic: every request ends exactly once (batched, expired or drained); batches respect
// max_batch_size and one shape; within a level and shape, batches keep arrival order.
TEST(DynamicBatcher, RandomTrafficKeepsTheInvariants) {
  std::mt19937 rng(1234);
  BatcherConfig c = batching(6, 200, {2, 4});
  c.priority_levels = 2;
  c.default_priority_level = 2;
  c.default_policy.default_timeout_us = 900;
  c.max_queue_size = 64;
  DynamicBatcher b(c);
  struct Info {
    int rows, level;
    std::string key;
  };
  std::map<uint64_t, Info> info;
  std::map<uint64_t, int> ended;
  std::vector<uint64_t> order_seen;  // batched ids, in batch order
  uint64_t next_id = 1;
  int64_t now = 0;
  int refused = 0;
  for (int step = 0; step < 20000; ++step) {
    now += std::uniform_int_distribution<int>(0, 60)(rng);
    const int arrivals = std::uniform_int_distribution<int>(0, 2)(rng);
    for (int a = 0; a < arrivals; ++a) {
      const int rows = std::uniform_int_distribution<int>(1, 3)(rng);
      const int level = std::uniform_int_distribution<int>(1, 2)(rng);
      const std::string key = std::uniform_int_distribution<int>(0, 2)(rng) == 0 ? "B" : "A";
      const Status s = b.enqueue(item(next_id, now, rows, key, level));
      if (s.ok()) {
        info[next_id] = {rows, level, key};
      } else {
        ASSERT_EQ(s.code(), StatusCode::kUnavailable) << s.to_string();
        ++refused;
      }
      ++next_id;
    }
    const Decision d = b.poll(now);
    for (uint64_t id : d.expired) ++ended[id];
    int rows = 0;
    for (uint64_t id : d.batch) {
      ++ended[id];
      rows += info.at(id).rows;
      EXPECT_EQ(info.at(id).key, info.at(d.batch.front()).key);
      order_seen.push_back(id);
    }
    EXPECT_LE(rows, 6);
    EXPECT_TRUE(d.wake_at_us == -1 || d.wake_at_us >= now) << "wake_at in the past";
    if (d.batch.empty() && d.wake_at_us > now) {
      // Nothing is due before wake_at: polling just before it must send and expire nothing.
      const Decision early = b.poll(d.wake_at_us - 1);
      EXPECT_TRUE(early.batch.empty());
      EXPECT_TRUE(early.expired.empty());
      now = d.wake_at_us - 1;
    }
  }
  for (uint64_t id : b.drain()) ++ended[id];
  EXPECT_EQ(ended.size(), info.size());
  for (const auto& [id, n] : ended) EXPECT_EQ(n, 1) << "id " << id;
  std::map<std::pair<int, std::string>, uint64_t> last;
  for (uint64_t id : order_seen) {
    uint64_t& prev = last[{info[id].level, info[id].key}];
    EXPECT_GT(id, prev) << "arrival order broken within a level and shape";
    prev = id;
  }
  EXPECT_GT(order_seen.size(), 1000u);
  EXPECT_GT(info.size(), 5000u);
  (void)refused;
}

}  // namespace
}  // namespace osprey::server::scheduler
