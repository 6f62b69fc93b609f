#include "select/ranking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "select/select_report.h"
#include "test_candidates.h"

namespace osprey::bench::select {
namespace {

using testing::make;

TEST(SelectNormalize, DirectionsEqualValuesAndMissing) {
  const auto lower = normalize({10, 20, 30}, false);
  EXPECT_DOUBLE_EQ(lower[0], 1);
  EXPECT_DOUBLE_EQ(lower[1], 0.5);
  EXPECT_DOUBLE_EQ(lower[2], 0);
  const auto higher = normalize({10, 20, 30}, true);
  EXPECT_DOUBLE_EQ(higher[0], 0);
  EXPECT_DOUBLE_EQ(higher[2], 1);
  for (bool dir : {false, true}) {
    const auto equal = normalize({7, 7, 7}, dir);
    EXPECT_EQ(equal, (std::vector<double>{1, 1, 1}));  // no division by zero
    EXPECT_EQ(normalize({3}, dir), (std::vector<double>{1}));
  }
  const auto missing = normalize({-1, 4, 8}, false);
  EXPECT_DOUBLE_EQ(missing[0], -1);
  EXPECT_DOUBLE_EQ(missing[1], 1);
  EXPECT_DOUBLE_EQ(missing[2], 0);
  EXPECT_TRUE(normalize({}, true).empty());
}

TEST(SelectRanking, WeightedSumOrdersCandidates) {
  // a: fastest, biggest; b: slowest, smallest; c: in between.
  const std::vector<Candidate> in = {make("a", 1, 1.0, 900, 300, 50),
                                     make("b", 1, 3.0, 300, 100, 10),
                                     make("c", 1, 2.0, 600, 200, 30)};
  SelectOptions o;  // latency 0.4, throughput 0.3, memory 0.2, cold start 0.1
  auto s = select_candidates(in, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->ranking.size(), 3u);
  EXPECT_EQ(s->ranking[0].candidate.framework, "a");  // 0.4 + 0.3 = 0.7
  EXPECT_NEAR(s->ranking[0].total, 0.7, 1e-12);
  EXPECT_EQ(s->ranking[1].candidate.framework, "c");  // 0.5 everywhere
  EXPECT_NEAR(s->ranking[1].total, 0.5, 1e-12);
  EXPECT_EQ(s->ranking[2].candidate.framework, "b");  // 0.2 + 0.1 = 0.3
  EXPECT_DOUBLE_EQ(s->ranking[0].score[0], 1);
  EXPECT_DOUBLE_EQ(s->ranking[2].score[0], 0);
  EXPECT_DOUBLE_EQ(s->ranking[0].raw[0], 1.5);  // p99

  o.weights = parse_weights("memory=1").value();
  s = select_candidates(in, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ranking[0].candidate.framework, "b");
}

TEST(SelectRanking, LatencyStatChoosesTheColumn) {
  Candidate a = make("a", 1, 1.0, 100, 100, 10), b = make("b", 1, 2.0, 100, 100, 10);
  a.latency_ms[3] = 9;  // a: better p50, worse p99
  SelectOptions o;
  o.weights = parse_weights("latency=1").value();
  EXPECT_EQ(select_candidates({a, b}, o)->ranking[0].candidate.framework, "b");
  o.latency_stat = LatencyStat::kP50;
  EXPECT_EQ(select_candidates({a, b}, o)->ranking[0].candidate.framework, "a");
}

TEST(SelectRanking, TiesBreakByP99ThenFrameworkName) {
  SelectOptions o;
  o.weights = parse_weights("memory=1").value();  // every total is 1
  Candidate slow = make("aaa", 1, 5, 100, 100, 10), fast_z = make("zzz", 1, 1, 100, 100, 10),
            fast_m = make("mmm", 1, 1, 100, 100, 10);
  auto s = select_candidates({slow, fast_z, fast_m}, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ranking[0].candidate.framework, "mmm");
  EXPECT_EQ(s->ranking[1].candidate.framework, "zzz");
  EXPECT_EQ(s->ranking[2].candidate.framework, "aaa");
  EXPECT_EQ(s->ranking[1].why_lost,
            "tied at total 1.000; ranked lower by tie-break (framework name)");
  EXPECT_EQ(s->ranking[2].why_lost,
            "tied at total 1.000; ranked lower by tie-break (p99 7.50 ms vs 1.50 ms)");
}

TEST(SelectRanking, WhyLostNamesTheCriterionFurthestBehind) {
  SelectOptions o;
  o.weights = parse_weights("latency=0.4,throughput=0.3,memory=0.2,cold_start=0.1").value();
  const std::vector<Candidate> in = {make("osprey", 1, 1.0, 260, 100, 10),
                                     make("onnxruntime", 1, 1.0, 180, 100, 10),
                                     make("slowpoke", 1, 1.0, 220, 100, 10)};
  auto s = select_candidates(in, o);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->ranking[0].candidate.framework, "osprey");
  EXPECT_EQ(s->ranking[2].candidate.framework, "onnxruntime");
  EXPECT_EQ(s->ranking[2].why_lost,
            "throughput: 180/s vs 260/s, -0.300 weighted (total 0.700 vs 1.000)");
  EXPECT_EQ(s->ranking[1].why_lost,
            "throughput: 220/s vs 260/s, -0.150 weighted (total 0.850 vs 1.000)");
  EXPECT_TRUE(s->ranking[0].why_lost.empty());
}

TEST(SelectRanking, ConstraintsAndFailuresMakeCandidatesIneligible) {
  Candidate failed = make("ncnn", 1, 1, 1, 1, 1);
  failed.ok = false;
  failed.reason = "load_failed: unsupported op Foo";
  Candidate slow = make("onnxruntime", 2, 27.4667, 500, 100, 10);
  Candidate good = make("osprey", 2, 2, 400, 100, 10);
  Candidate no_rss = make("tflite", 1, 2, 400, 100, 10);
  no_rss.peak_rss_bytes = -1;
  SelectOptions o;
  o.constraints.sla = parse_sla("p99<=30ms").value();
  auto s = select_candidates({failed, slow, good, no_rss}, o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->ranking.size(), 1u);
  EXPECT_EQ(s->ranking[0].candidate.framework, "osprey");
  ASSERT_EQ(s->ineligible.size(), 3u);  // sorted by framework
  EXPECT_EQ(s->ineligible[0].candidate.framework, "ncnn");
  EXPECT_EQ(s->ineligible[0].reasons, std::vector<std::string>{"load_failed: unsupported op Foo"});
  EXPECT_EQ(s->ineligible[1].reasons, std::vector<std::string>{"p99 41.2 ms > 30.0 ms"});
  EXPECT_EQ(s->ineligible[2].reasons,
            std::vector<std::string>{"memory not recorded (its weight is 0.200)"});
  // With memory weighted 0, the missing value does not matter.
  o.weights = parse_weights("latency=1").value();
  s = select_candidates({no_rss}, o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->ranking.size(), 1u);
  EXPECT_DOUBLE_EQ(s->ranking[0].score[2], -1);
  EXPECT_DOUBLE_EQ(s->ranking[0].total, 1);
}

TEST(SelectRanking, NothingEligibleIsAnEmptyRanking) {
  SelectOptions o;
  o.constraints.min_throughput = 1e9;
  auto s = select_candidates({make("a", 1, 1, 10, 1, 1)}, o);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->ranking.empty());
  ASSERT_EQ(s->ineligible.size(), 1u);
  EXPECT_EQ(s->ineligible[0].reasons[0], "throughput 10.0/s < 1000000000/s");
}

TEST(SelectRanking, ModelChoice) {
  Candidate a = make("osprey", 1, 1, 10, 1, 1), b = make("osprey", 1, 2, 10, 1, 1);
  b.model = "/other/resnet.onnx";
  SelectOptions o;
  auto s = select_candidates({a, b}, o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      s.status().message().find("choose one with --model (/models/m.onnx, /other/resnet.onnx)"),
      std::string::npos)
      << s.status().message();
  for (const char* name : {"resnet", "resnet.onnx", "/other/resnet.onnx"}) {
    o.model = name;
    s = select_candidates({a, b}, o);
    ASSERT_TRUE(s.ok()) << name;
    ASSERT_EQ(s->ranking.size(), 1u);
    EXPECT_EQ(s->ranking[0].candidate.model, "/other/resnet.onnx");
  }
  o.model = "bert";
  s = select_candidates({a, b}, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("'bert'"), std::string::npos);
  EXPECT_FALSE(select_candidates({}, SelectOptions{}).ok());
}

TEST(SelectRanking, ShuffledInputGivesTheSameBytes) {
  std::vector<Candidate> in;
  const char* fws[] = {"osprey", "onnxruntime", "openvino"};
  for (int t = 1; t <= 4; ++t)
    for (int f = 0; f < 3; ++f)
      in.push_back(make(fws[f], t, 1 + (t * 7 + f * 3) % 5, 100 + (t * 13 + f) % 7 * 10,
                        100 + f * 10, 10 + t));
  in.push_back(make("osprey", 8, 1, 100, 100, 10));  // an exact duplicate but for threads
  Candidate failed = make("ncnn", 1, 1, 1, 1, 1);
  failed.ok = false;
  failed.reason = "unavailable: not installed";
  in.push_back(failed);
  SelectOptions o;
  o.constraints.sla = parse_sla("p99<=6ms").value();
  const auto first = select_candidates(in, o);
  ASSERT_TRUE(first.ok());
  const std::string text = selection_text(*first, o.constraints);
  const std::string json = selection_json(*first, o.constraints);
  std::mt19937 rng(42);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(in.begin(), in.end(), rng);
    const auto again = select_candidates(in, o);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(selection_text(*again, o.constraints), text);
    EXPECT_EQ(selection_json(*again, o.constraints), json);
  }
}

}  // namespace
}  // namespace osprey::bench::select
