// The step runner over a fake transport: counts, errors by message, stats deltas and the
// request-rate schedule. Nothing here asserts on timing.
#include "runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

namespace osprey::loadgen {
namespace {

struct FakeServer {
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> stats_reads{0};
  bool fail_every_third = false;
  bool stats_fail = false;
};

class FakeWorker : public InferWorker {
 public:
  explicit FakeWorker(FakeServer* s) : s_(s) {}
  InferOutcome infer() override {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    const int64_t n = ++s_->calls;
    if (s_->fail_every_third && n % 3 == 0) return {false, "HTTP 400: bad", 0, 0};
    return {true, "", 100, 100};
  }

 private:
  FakeServer* s_;
};

class FakeTransport : public Transport {
 public:
  explicit FakeTransport(FakeServer* s) : s_(s) {}
  Result<ModelInfo> metadata() override { return ModelInfo{"m", {{"x", "FP32", {1}}}, {}}; }
  Result<ServerStats> statistics() override {
    if (s_->stats_fail) return unimplemented("no statistics endpoint");
    ++s_->stats_reads;
    ServerStats st;
    st.success_count = static_cast<uint64_t>(s_->calls.load());
    st.compute_infer_ns = st.success_count * 100'000;
    return st;
  }
  Status prepare(const std::vector<InputTensor>&) override { return Status(); }
  Result<std::unique_ptr<InferWorker>> make_worker() override {
    return std::unique_ptr<InferWorker>(new FakeWorker(s_));
  }

 private:
  FakeServer* s_;
};

MeasureSettings quick() {
  MeasureSettings m;
  m.interval_s = 0.05;
  m.max_trials = 4;
  return m;
}

TEST(RunStep, ConcurrencyCountsRequestsAndErrors) {
  FakeServer server;
  server.fail_every_third = true;
  FakeTransport t(&server);
  LoadSpec load;
  load.value = 3;
  auto r = run_step(t, load, quick());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_GE(r->windows, 3);
  EXPECT_LE(r->windows, 4);
  EXPECT_GT(r->client.completed, 0);
  EXPECT_GT(r->client.failed, 0);
  EXPECT_EQ(r->client.errors.at("HTTP 400: bad"), r->client.failed);
  EXPECT_EQ(server.stats_reads.load(), r->windows + 1);
  EXPECT_TRUE(r->breakdown.has_server);
  EXPECT_DOUBLE_EQ(r->breakdown.compute_infer_us, 100);
  EXPECT_GT(r->client.latency_ms.count, 0u);
}

TEST(RunStep, FixedDurationIsOneWindow) {
  FakeServer server;
  FakeTransport t(&server);
  MeasureSettings m;
  m.duration_s = 0.05;
  LoadSpec load;
  auto r = run_step(t, load, m);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->windows, 1);
  EXPECT_TRUE(r->stable);
  EXPECT_EQ(r->client.failed, 0);
}

TEST(RunStep, RequestRateFollowsTheScheduleAndMissingStatsAreReported) {
  FakeServer server;
  server.stats_fail = true;
  FakeTransport t(&server);
  LoadSpec load;
  load.mode = LoadMode::kRequestRate;
  load.value = 200;
  load.distribution = Distribution::kConstant;
  load.max_threads = 4;
  MeasureSettings m;
  m.duration_s = 0.5;
  auto r = run_step(t, load, m);
  ASSERT_TRUE(r.ok());
  // A constant 200/s schedule over 0.5 s issues about 100 requests (not a timing claim: the
  // schedule, not the machine, sets the count; generous bounds for a loaded machine).
  EXPECT_GT(r->scheduled, 50);
  EXPECT_LE(r->scheduled, 102);
  EXPECT_FALSE(r->breakdown.has_server);
  EXPECT_NE(r->server_stats_error.find("no statistics endpoint"), std::string::npos);
}

TEST(RunStep, BadSettingsAreRefused) {
  FakeServer server;
  FakeTransport t(&server);
  MeasureSettings m = quick();
  m.max_trials = 2;
  EXPECT_EQ(run_step(t, LoadSpec{}, m).status().code(), StatusCode::kInvalidArgument);
  LoadSpec zero;
  zero.value = 0;
  EXPECT_FALSE(run_step(t, zero, quick()).ok());
}

}  // namespace
}  // namespace osprey::loadgen
