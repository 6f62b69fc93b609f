#include "measurement.h"

#include <gtest/gtest.h>

#include "server_stats.h"

namespace osprey::loadgen {
namespace {

RequestRecord ok(double latency_ms) {
  return {0, static_cast<int64_t>(latency_ms * 1e6), 1000, 2000, true, ""};
}
RequestRecord failed(const std::string& msg) { return {0, 0, 0, 0, false, msg}; }

TEST(SummarizeWindow, ThroughputPercentilesAndErrorsByMessage) {
  std::vector<RequestRecord> r;
  for (int i = 1; i <= 100; ++i) r.push_back(ok(i));
  r.push_back(failed("HTTP 400: bad"));
  r.push_back(failed("HTTP 400: bad"));
  r.push_back(failed("timed out after 10 ms"));
  const WindowResult w = summarize_window(r, 2.0);
  EXPECT_EQ(w.completed, 100);
  EXPECT_EQ(w.failed, 3);
  EXPECT_DOUBLE_EQ(w.throughput, 50.0);
  EXPECT_DOUBLE_EQ(w.latency_ms.p50, 50.5);
  EXPECT_NEAR(w.latency_ms.p99, 99.01, 1e-9);
  EXPECT_DOUBLE_EQ(w.avg_send_us, 1.0);
  EXPECT_DOUBLE_EQ(w.avg_recv_us, 2.0);
  ASSERT_EQ(w.errors.size(), 2u);
  EXPECT_EQ(w.errors.at("HTTP 400: bad"), 2);
  EXPECT_EQ(w.errors.at("timed out after 10 ms"), 1);
}

WindowResult window(double throughput, double p50) {
  WindowResult w;
  w.throughput = throughput;
  w.latency_ms.p50 = p50;
  return w;
}

TEST(WindowsStable, NeedsThreeAgreeingWindowsOnThroughputAndP50) {
  const bench::StabilityCriterion c{3, 0.10};
  EXPECT_FALSE(windows_stable({window(100, 5), window(101, 5)}, c));
  EXPECT_TRUE(windows_stable({window(10, 50), window(100, 5), window(102, 5.1), window(99, 4.9)}, c));
  EXPECT_FALSE(windows_stable({window(100, 5), window(150, 5), window(100, 5)}, c));  // throughput
  EXPECT_FALSE(windows_stable({window(100, 5), window(100, 8), window(100, 5)}, c));  // p50
}

TEST(MergeWindows, PoolsRecords) {
  const WindowResult w = merge_windows({{ok(1), ok(2)}, {ok(3), failed("x")}}, 3.0);
  EXPECT_EQ(w.completed, 3);
  EXPECT_EQ(w.failed, 1);
  EXPECT_DOUBLE_EQ(w.throughput, 1.0);
  EXPECT_DOUBLE_EQ(w.latency_ms.p50, 2.0);
}

TEST(ServerStats, ParsesV2StatisticsJsonForTheModel) {
  const char* json = R"({"model_stats":[
    {"name":"other","version":"1","inference_count":9,"execution_count":9,
     "inference_stats":{"success":{"count":9,"ns":9}}},
    {"name":"add_sub","version":"1","last_inference":1,"inference_count":10,"execution_count":8,
     "inference_stats":{"success":{"count":10,"ns":5000000},"fail":{"count":1,"ns":7},
       "queue":{"count":10,"ns":1000000},"compute_input":{"count":10,"ns":200000},
       "compute_infer":{"count":10,"ns":3000000},"compute_output":{"count":10,"ns":100000}},
     "batch_stats":[]}]})";
  auto s = parse_stats_json(json, "add_sub");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->inference_count, 10u);
  EXPECT_EQ(s->execution_count, 8u);
  EXPECT_EQ(s->success_count, 10u);
  EXPECT_EQ(s->fail_count, 1u);
  EXPECT_EQ(s->queue_ns, 1000000u);
  EXPECT_EQ(s->compute_infer_ns, 3000000u);
  EXPECT_EQ(parse_stats_json(json, "missing").status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(parse_stats_json("[]", "add_sub").ok());
}

TEST(ServerStats, DeltaAndBackwardsCounters) {
  ServerStats a, b;
  a.success_count = 10, a.queue_ns = 100;
  b.success_count = 30, b.queue_ns = 700;
  auto d = stats_delta(a, b);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->success_count, 20u);
  EXPECT_EQ(d->queue_ns, 600u);
  EXPECT_EQ(stats_delta(b, a).status().code(), StatusCode::kFailedPrecondition);
}

TEST(Breakdown, PerRequestAveragesAndNetworkRemainder) {
  ServerStats d;
  d.success_count = 100;
  d.queue_ns = 100 * 50'000;            // 50 us each
  d.compute_input_ns = 100 * 10'000;    // 10 us
  d.compute_infer_ns = 100 * 400'000;   // 400 us
  d.compute_output_ns = 100 * 20'000;   // 20 us
  const Breakdown b = compute_breakdown(1000, 30, 20, d);
  ASSERT_TRUE(b.has_server);
  EXPECT_DOUBLE_EQ(b.server_queue_us, 50);
  EXPECT_DOUBLE_EQ(b.compute_input_us, 10);
  EXPECT_DOUBLE_EQ(b.compute_infer_us, 400);
  EXPECT_DOUBLE_EQ(b.compute_output_us, 20);
  EXPECT_DOUBLE_EQ(b.network_us, 1000 - 30 - 20 - 50 - 430);  // 470
  EXPECT_NE(b.where.find("I/O"), std::string::npos) << b.where;  // 520 us of I/O vs 430 compute

  const Breakdown c = compute_breakdown(500, 1, 1, d);  // compute dominates, network clamps at 0
  EXPECT_DOUBLE_EQ(c.network_us, 18);
  EXPECT_NE(c.where.find("most time goes to compute"), std::string::npos) << c.where;

  const Breakdown none = compute_breakdown(500, 1, 1, ServerStats{});
  EXPECT_FALSE(none.has_server);
}

}  // namespace
}  // namespace osprey::loadgen
