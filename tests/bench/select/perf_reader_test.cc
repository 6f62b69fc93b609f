// `osprey select` over perf.json files of `osprey perf`: reading steps as candidates, the
// failed-requests constraint, criteria no candidate records, and refusing mixed input.
#include "select/perf_reader.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "select/ranking.h"
#include "select/results_reader.h"
#include "select/select_report.h"

namespace osprey::bench::select {
namespace {

const std::string kDir = OSPREY_SELECT_FIXTURES;

std::vector<Candidate> perf_fixture() {
  auto r = read_results(kDir + "/perf.json");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : std::vector<Candidate>{};
}

TEST(SelectPerf, EachStepIsACandidate) {
  const auto c = perf_fixture();
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].measured, Measured::kThroughServer);
  EXPECT_EQ(c[0].framework, "server@localhost:8001");
  EXPECT_EQ(c[0].model, "tiny");
  EXPECT_EQ(c[0].protocol, "grpc");
  EXPECT_EQ(c[0].load, "concurrency=1");
  EXPECT_EQ(c[0].batch, 2);
  EXPECT_EQ(config_label(c[0]), "protocol=grpc concurrency=1 batch=2 shapes=default");
  EXPECT_DOUBLE_EQ(c[0].latency(LatencyStat::kP50), 1.0);
  EXPECT_DOUBLE_EQ(c[0].latency(LatencyStat::kP99), 1.5);
  EXPECT_DOUBLE_EQ(c[0].latency(LatencyStat::kMax), 2.0);
  EXPECT_DOUBLE_EQ(c[0].throughput, 2000);  // 1000 requests/s x batch 2
  EXPECT_EQ(c[0].peak_rss_bytes, -1);       // a load test does not see the server's memory
  EXPECT_LT(c[0].cold_start_ms(), 0);
  EXPECT_EQ(c[0].failed_requests, 0);
  EXPECT_EQ(c[2].load, "concurrency=16 (not stable)");
  EXPECT_EQ(c[2].failed_requests, 3);
}

TEST(SelectPerf, RequestRateStepsAndBadSteps) {
  const std::string head =
      R"({"settings": {"model": "m", "url": "h:8000", "protocol": "http", "batch_size": 1},
          "steps": [)";
  auto ok = parse_results(head + R"({"mode": "request_rate", "request_rate": 250,
      "distribution": "poisson", "completed": 10, "failed": 0, "throughput": 250,
      "latency_ms": {"p50": 1, "p90": 2, "p95": 3, "p99": 4, "max": 5}}]})",
                          "p.json");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ((*ok)[0].load, "request_rate=250/s poisson");
  auto none = parse_results(head + R"({"mode": "concurrency", "concurrency": 2, "completed": 0,
      "failed": 7, "throughput": 0, "latency_ms": {}}]})",
                            "p.json");
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_FALSE((*none)[0].ok);
  EXPECT_EQ((*none)[0].reason, "no completed requests (7 failed)");
  auto bad = parse_results(head + R"({"mode": "burst", "completed": 1}]})", "p.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("p.json: steps[0]: unknown 'mode' \"burst\""),
            std::string::npos)
      << bad.status().message();
  auto no_url = parse_results(R"({"settings": {"model": "m"}, "steps": []})", "p.json");
  ASSERT_FALSE(no_url.ok());
  EXPECT_NE(no_url.status().message().find("'url' is missing"), std::string::npos);
}

TEST(SelectPerf, UnrecordedCriteriaAreDroppedAndFailedStepsRefused) {
  auto s = select_candidates(perf_fixture(), SelectOptions{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->measured, Measured::kThroughServer);
  // memory (0.2) and cold_start (0.1) are recorded by no step: dropped, the rest renormalized.
  ASSERT_EQ(s->notes.size(), 2u);
  EXPECT_EQ(s->notes[0].rfind("memory (weight 0.200) dropped from the weights", 0), 0u)
      << s->notes[0];
  EXPECT_EQ(s->notes[1].rfind("cold_start (weight 0.100) dropped", 0), 0u) << s->notes[1];
  EXPECT_DOUBLE_EQ(s->weights[0], 0.4 / 0.7);
  EXPECT_DOUBLE_EQ(s->weights[1], 0.3 / 0.7);
  EXPECT_EQ(s->weights[2], 0);
  EXPECT_EQ(s->weights[3], 0);
  ASSERT_EQ(s->ranking.size(), 2u);
  // concurrency=1: best p99 (1.5 vs 2.5 ms) and worst throughput: 0.571 vs 0.429.
  EXPECT_EQ(s->ranking[0].candidate.load, "concurrency=1");
  EXPECT_NEAR(s->ranking[0].total, 0.4 / 0.7, 1e-12);
  EXPECT_NEAR(s->ranking[1].total, 0.3 / 0.7, 1e-12);
  EXPECT_EQ(s->ranking[1].why_lost.rfind("latency: ", 0), 0u) << s->ranking[1].why_lost;
  ASSERT_EQ(s->ineligible.size(), 1u);
  EXPECT_EQ(s->ineligible[0].reasons, std::vector<std::string>{"3 failed requests"});

  const std::string text = selection_text(*s, Constraints{});
  EXPECT_NE(text.find("Measured: through a server (osprey perf)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Note: memory (weight 0.200) dropped"), std::string::npos) << text;
  EXPECT_NE(text.find("Recommended: server@localhost:8001 with protocol=grpc, concurrency=1, "
                      "batch=2, shapes default (total 0.571; p99 1.50 ms, 2000/s)."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("concurrency=16 (not stable) batch=2 shapes=default: ineligible: 3 "
                      "failed requests"),
            std::string::npos)
      << text;
}

TEST(SelectPerf, WeighingOnlyUnrecordedCriteriaIsAnError) {
  SelectOptions o;
  o.weights = parse_weights("memory=1,cold_start=1").value();
  auto s = select_candidates(perf_fixture(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no candidate records any weighted criterion (memory, "
                                      "cold_start)"),
            std::string::npos)
      << s.status().message();
}

TEST(SelectPerf, MixingBenchAndPerfResultsIsRefused) {
  auto bench = read_results(kDir + "/bench_results.json");
  ASSERT_TRUE(bench.ok()) << bench.status().message();
  auto all = perf_fixture();
  all.insert(all.end(), bench->begin(), bench->end());
  auto s = select_candidates(all, SelectOptions{});
  ASSERT_FALSE(s.ok());
  const std::string& m = s.status().message();
  EXPECT_NE(m.find("the results mix in-process (osprey bench) measurements"), std::string::npos)
      << m;
  EXPECT_NE(m.find("bench_results.json"), std::string::npos) << m;
  EXPECT_NE(m.find("perf.json"), std::string::npos) << m;
  EXPECT_NE(m.find("select over one kind at a time"), std::string::npos) << m;
}

TEST(SelectPerf, SameInputSameAnswerInAnyOrder) {
  auto c = perf_fixture();
  auto first = select_candidates(c, SelectOptions{});
  ASSERT_TRUE(first.ok());
  const std::string expected = selection_json(*first, Constraints{});
  EXPECT_NE(expected.find("\"measured\": \"server\""), std::string::npos) << expected;
  EXPECT_NE(expected.find("\"failed_requests\": 3"), std::string::npos) << expected;
  std::sort(c.begin(), c.end(),
            [](const Candidate& a, const Candidate& b) { return a.load > b.load; });
  do {
    auto again = select_candidates(c, SelectOptions{});
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(selection_json(*again, Constraints{}), expected);
  } while (std::next_permutation(
      c.begin(), c.end(), [](const Candidate& a, const Candidate& b) { return a.load > b.load; }));
}

}  // namespace
}  // namespace osprey::bench::select
