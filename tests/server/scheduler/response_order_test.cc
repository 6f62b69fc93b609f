#include "scheduler/response_order.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace osprey::server::scheduler {
namespace {

using Ids = std::vector<uint64_t>;

// Runs what take_ready() gives and returns the ids it sent.
Ids release(ResponseOrder& order, Ids& sent) {
  const size_t before = sent.size();
  for (auto& answer : order.take_ready()) answer();
  return Ids(sent.begin() + static_cast<long>(before), sent.end());
}

TEST(ResponseOrder, LaterAnswerWaitsForEarlierOnes) {
  ResponseOrder order;
  Ids sent;
  for (uint64_t id : {10, 11, 12}) ASSERT_TRUE(order.admit(id).ok());
  ASSERT_TRUE(order.complete(12, [&] { sent.push_back(12); }).ok());
  ASSERT_TRUE(order.complete(11, [&] { sent.push_back(11); }).ok());
  EXPECT_TRUE(release(order, sent).empty()) << "10 has no answer yet";
  EXPECT_EQ(order.held(), 2u);
  EXPECT_EQ(order.unanswered(), Ids({10}));
  EXPECT_TRUE(order.awaiting(10));
  EXPECT_FALSE(order.awaiting(11));
  ASSERT_TRUE(order.complete(10, [&] { sent.push_back(10); }).ok());
  EXPECT_EQ(release(order, sent), Ids({10, 11, 12}));
  EXPECT_EQ(order.outstanding(), 0u);
  EXPECT_EQ(order.held(), 0u);
}

TEST(ResponseOrder, InOrderAnswersGoAtOnce) {
  ResponseOrder order;
  Ids sent;
  ASSERT_TRUE(order.admit(1).ok());
  ASSERT_TRUE(order.admit(2).ok());
  ASSERT_TRUE(order.complete(1, [&] { sent.push_back(1); }).ok());
  EXPECT_EQ(release(order, sent), Ids({1}));
  ASSERT_TRUE(order.admit(3).ok());  // admitted after 1 left: still behind 2
  ASSERT_TRUE(order.complete(3, [&] { sent.push_back(3); }).ok());
  EXPECT_TRUE(release(order, sent).empty());
  ASSERT_TRUE(order.complete(2, [&] { sent.push_back(2); }).ok());
  EXPECT_EQ(release(order, sent), Ids({2, 3}));
}

TEST(ResponseOrder, MisuseIsRefusedWithoutLosingTheOrder) {
  ResponseOrder order;
  Ids sent;
  ASSERT_TRUE(order.admit(1).ok());
  Status s = order.admit(1);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("request 1"), std::string::npos);
  s = order.complete(2, [&] { sent.push_back(2); });
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  ASSERT_TRUE(order.complete(1, [&] { sent.push_back(1); }).ok());
  s = order.complete(1, [&] { sent.push_back(100); });
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(release(order, sent), Ids({1}));
  EXPECT_EQ(order.complete(1, [] {}).code(), StatusCode::kNotFound) << "already released";
  EXPECT_TRUE(order.admit(1).ok()) << "a released id may come again";
}

TEST(ResponseOrder, EmptyAnswerStillTakesItsTurn) {
  ResponseOrder order;
  Ids sent;
  ASSERT_TRUE(order.admit(1).ok());
  ASSERT_TRUE(order.admit(2).ok());
  ASSERT_TRUE(order.complete(2, [&] { sent.push_back(2); }).ok());
  ASSERT_TRUE(order.complete(1, nullptr).ok());
  EXPECT_EQ(release(order, sent), Ids({2}));
  EXPECT_EQ(order.outstanding(), 0u);
}

TEST(ResponseSequencer, RunsAnswersInOrderOnTheThreadThatFillsTheGap) {
  ResponseSequencer seq;
  Ids sent;
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(seq.admit(id).ok());
  ASSERT_TRUE(seq.complete(3, [&] { sent.push_back(3); }).ok());
  ASSERT_TRUE(seq.complete(2, [&] { sent.push_back(2); }).ok());
  EXPECT_TRUE(sent.empty());
  ASSERT_TRUE(seq.complete(1, [&] { sent.push_back(1); }).ok());
  EXPECT_EQ(sent, Ids({1, 2, 3}))
      << "complete() of the oldest sends the held ones before returning";
  EXPECT_EQ(seq.outstanding(), 0u);
}

TEST(ResponseSequencer, ThrowingAnswerDoesNotStopTheOrder) {
  ResponseSequencer seq;
  Ids sent;
  ASSERT_TRUE(seq.admit(1).ok());
  ASSERT_TRUE(seq.admit(2).ok());
  ASSERT_TRUE(seq.complete(2, [&] { sent.push_back(2); }).ok());
  ASSERT_TRUE(seq.complete(1, [] { throw std::runtime_error("client went away"); }).ok());
  EXPECT_EQ(sent, Ids({2}));
  ASSERT_TRUE(seq.admit(3).ok());
  ASSERT_TRUE(seq.complete(3, [&] { sent.push_back(3); }).ok());
  EXPECT_EQ(sent, Ids({2, 3}));
}

// Answers completed from many threads in a shuffled order still run one at a time, in order.
TEST(ResponseSequencer, ConcurrentCompletionsKeepTheOrder) {
  constexpr int kThreads = 6;
  constexpr uint64_t kIds = 3000;
  ResponseSequencer seq;
  for (uint64_t id = 0; id < kIds; ++id) ASSERT_TRUE(seq.admit(id).ok());
  Ids sent;
  std::atomic<int> running{0};
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      // Thread t completes ids t, t + kThreads, ... from the last one down: late ids come first.
      std::vector<uint64_t> mine;
      for (uint64_t id = static_cast<uint64_t>(t); id < kIds; id += kThreads) mine.push_back(id);
      for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
        const uint64_t id = *it;
        const Status s = seq.complete(id, [&, id] {
          if (running.fetch_add(1) != 0) overlap = true;
          sent.push_back(id);  // no lock: answers never run concurrently
          running.fetch_sub(1);
        });
        ASSERT_TRUE(s.ok()) << s.to_string();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_FALSE(overlap) << "two answers ran at once";
  ASSERT_EQ(sent.size(), kIds);
  for (uint64_t i = 0; i < kIds; ++i) ASSERT_EQ(sent[i], i) << "at position " << i;
  EXPECT_EQ(seq.outstanding(), 0u);
}

}  // namespace
}  // namespace osprey::server::scheduler
