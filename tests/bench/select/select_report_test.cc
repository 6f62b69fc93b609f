#include "select/select_report.h"

#include <gtest/gtest.h>

#include "test_candidates.h"

namespace osprey::bench::select {
namespace {

using testing::make;

Selection two_and_one_out(Constraints* k) {
  Candidate slow = make("onnxruntime", 2, 27.4667, 500, 100, 10);
  k->sla = parse_sla("p99<=30ms").value();
  SelectOptions o;
  o.constraints = *k;
  auto s = select_candidates(
      {make("osprey", 2, 2, 400, 64, 10), make("openvino", 1, 3, 200, 64, 20), slow}, o);
  EXPECT_TRUE(s.ok());
  return *s;
}

TEST(SelectReport, TextHasTableRecommendationAndReasons) {
  Constraints k;
  const Selection s = two_and_one_out(&k);
  const std::string t = selection_text(s, k);
  EXPECT_NE(t.find("Model: /models/m.onnx\n"), std::string::npos) << t;
  EXPECT_NE(t.find("Candidates: 2 eligible, 1 ineligible\n"), std::string::npos);
  EXPECT_NE(t.find("Constraints: p99 <= 30.0 ms\n"), std::string::npos);
  EXPECT_NE(t.find("rank  framework"), std::string::npos);
  EXPECT_NE(t.find("1.000 (3.00 ms)"), std::string::npos);  // osprey's p99 score and raw value
  EXPECT_NE(t.find("Recommended: osprey with threads=2, batch=1, precision=fp32, shapes default "
                   "(total 1.000; p99 3.00 ms, 400/s, peak RSS 64.0 MiB, cold start 10.0 ms)."),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  2. openvino threads=1 batch=1 precision=fp32 shapes=default: latency: "
                   "4.50 ms vs 3.00 ms, -0.400 weighted"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("  -  onnxruntime threads=2 batch=1 precision=fp32 shapes=default: "
                   "ineligible: p99 41.2 ms > 30.0 ms"),
            std::string::npos)
      << t;
}

TEST(SelectReport, NothingEligibleSaysWhyEachFailed) {
  Constraints k;
  k.min_throughput = 1e6;
  SelectOptions o;
  o.constraints = k;
  auto s = select_candidates({make("osprey", 1, 2, 400, 64, 10)}, o);
  ASSERT_TRUE(s.ok());
  const std::string t = selection_text(*s, k);
  EXPECT_NE(t.find("No candidate meets the constraints.\n\nWhy each failed:\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("throughput 400/s < 1000000/s"), std::string::npos);
  EXPECT_EQ(t.find("Recommended"), std::string::npos);
  EXPECT_NE(selection_json(*s, k).find("\"recommendation\": null"), std::string::npos);
}

TEST(SelectReport, JsonCarriesRankingScoresAndReasons) {
  Constraints k;
  const Selection s = two_and_one_out(&k);
  const std::string j = selection_json(s, k);
  for (const char* want :
       {"\"model\": \"/models/m.onnx\"", "\"latency_stat\": \"p99\"", "\"constraints\": [",
        "\"p99 <= 30.0 ms\"", "\"recommendation\": {", "\"framework\": \"osprey\"", "\"rank\": 2",
        "\"why_lost\": \"latency: 4.50 ms vs 3.00 ms", "\"reasons\": [",
        "\"p99 41.2 ms > 30.0 ms\"", "\"peak_rss_bytes\": 67108864", "\"cold_start_ms\": 10"})
    EXPECT_NE(j.find(want), std::string::npos) << want << "\n" << j;
}

}  // namespace
}  // namespace osprey::bench::select
