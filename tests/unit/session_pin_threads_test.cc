// SessionOptions::pin_threads: a pinned session computes what an unpinned one does, and the
// OpenMP workers of the calling thread end up pinned to CPUs of the affinity mask.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "model_builder.h"
#include "osprey/session.h"
#include "threading/cpu_info.h"
#include "threading/thread_pool.h"

namespace osprey {
namespace {

using testing::ModelBuilder;
constexpr int kF = onnx::TensorProto::FLOAT;

// y = Relu(Conv(x, w)): x float[N,4,16,16], w float[8,4,3,3].
std::string conv_model() {
  ModelBuilder m;
  m.input("x", kF, {-1, 4, 16, 16}).output("y");
  std::vector<float> w(8 * 4 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.02f * static_cast<float>(i % 17) - 0.15f;
  m.initializer("w", {8, 4, 3, 3}, w);
  m.node("Conv", {"x", "w"}, {"c"});
  m.node("Relu", {"c"}, {"y"});
  return m.bytes();
}

Tensor input(int64_t batch) {
  Tensor t(DType::kFloat32, {batch, 4, 16, 16});
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = 0.01f * static_cast<float>(i % 101) - 0.4f;
  return t;
}

std::set<int> affinity_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::set<int> cpus;
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.insert(c);
  return cpus;
}

// The affinity of every worker (not the calling thread) of a two-thread team opened from the
// calling thread: slow chunks make sure each team member runs at least one.
std::vector<std::set<int>> worker_affinities() {
  ThreadPool probe(2);
  const auto caller = std::this_thread::get_id();
  std::mutex mu;
  std::map<std::thread::id, std::set<int>> seen;
  probe.parallel_for(8, ThreadPool::kMinCostPerChunk, [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(mu);
    seen[std::this_thread::get_id()] = affinity_of_this_thread();
  });
  std::vector<std::set<int>> workers;
  for (const auto& [id, cpus] : seen)
    if (id != caller) workers.push_back(cpus);
  return workers;
}

TEST(SessionPinThreadsTest, PinnedSessionGivesTheSameOutputs) {
  SessionOptions plain, pinned;
  plain.threads = pinned.threads = 2;
  pinned.pin_threads = true;
  auto a = Session::load_from_bytes(conv_model(), plain);
  auto b = Session::load_from_bytes(conv_model(), pinned);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_FALSE((*a)->options().pin_threads);
  EXPECT_TRUE((*b)->options().pin_threads);
  for (int64_t batch : {1, 3}) {
    const Tensor x = input(batch);
    auto ra = (*a)->run({{"x", x}});
    auto rb = (*b)->run({{"x", x}});
    ASSERT_TRUE(ra.ok() && rb.ok());
    const Tensor& ya = (*ra)[0].second;
    const Tensor& yb = (*rb)[0].second;
    ASSERT_EQ(ya.shape(), (Shape{batch, 8, 14, 14}));
    ASSERT_EQ(yb.shape(), ya.shape());
    EXPECT_EQ(std::memcmp(ya.raw_data(), yb.raw_data(), ya.nbytes()), 0);
  }
}

// OpenMP keeps one worker pool per calling thread, so the check runs on a fresh thread whose
// workers no other test has touched.
TEST(SessionPinThreadsTest, RunPinsTheCallingThreadsWorkers) {
  const std::vector<int> mask = cpu::affinity_cpus();
  ASSERT_FALSE(mask.empty());
  const std::set<int> all(mask.begin(), mask.end());
  std::vector<std::set<int>> before, after;
  bool ran = false;
  std::thread fresh([&] {
    before = worker_affinities();
    SessionOptions pinned;
    pinned.threads = 2;
    pinned.pin_threads = true;
    auto s = Session::load_from_bytes(conv_model(), pinned);
    if (!s.ok()) return;
    ran = (*s)->run({{"x", input(1)}}).ok();
    after = worker_affinities();
  });
  fresh.join();
  ASSERT_TRUE(ran);
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(before[0], all);  // unpinned: the whole mask
  // Worker 1 of 2 goes to the (1 mod k)-th CPU of the mask.
  EXPECT_EQ(after[0], std::set<int>{mask[1 % mask.size()]});
}

}  // namespace
}  // namespace osprey
