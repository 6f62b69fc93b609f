#include "report.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace osprey::loadgen {
namespace {

StepResult step(double concurrency, double throughput) {
  StepResult s;
  s.load.value = concurrency;
  s.client.throughput = throughput;
  s.client.completed = 10;
  s.client.latency_ms.p50 = 1.5;
  s.client.latency_ms.p90 = 2;
  s.client.latency_ms.p95 = 2.5;
  s.client.latency_ms.p99 = 3;
  s.client.latency_ms.mean = 1.6;
  s.breakdown = {true, 1600, 10, 20, 100, 30, 1000, 40, 400, "most time goes to compute"};
  return s;
}

TEST(Csv, PerfAnalyzerHeader) {
  EXPECT_EQ(csv_header(LoadMode::kConcurrency, false),
            "Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,"
            "Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,"
            "p50 latency,p90 latency,p95 latency,p99 latency");
  EXPECT_EQ(csv_header(LoadMode::kRequestRate, true).substr(0, 13), "Request Rate,");
  EXPECT_NE(csv_header(LoadMode::kConcurrency, true).find(",p99 latency,Avg latency,request/response,response wait"),
            std::string::npos);
}

TEST(Csv, RowInMicrosecondsInHeaderOrder) {
  EXPECT_EQ(csv_row(step(2, 123.456), false), "2,123.46,10,400,100,30,1000,40,20,1500,2000,2500,3000");
  EXPECT_EQ(csv_row(step(2, 123.456), true),
            "2,123.46,10,400,100,30,1000,40,20,1500,2000,2500,3000,1600,30,1570");
}

TEST(Csv, RowsSortedByThroughput) {
  const std::string doc = csv_document({step(1, 50), step(4, 30), step(2, 80)}, false);
  const size_t a = doc.find("\n4,"), b = doc.find("\n1,"), c = doc.find("\n2,");
  ASSERT_NE(a, std::string::npos);
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(std::count(doc.begin(), doc.end(), '\n'), 4);
}

TEST(Json, SettingsStepsErrorsAndSearch) {
  RunSettings st;
  st.model = "add_sub";
  st.protocol = "http";
  StepResult s = step(1, 10);
  s.client.errors["HTTP 400: bad input"] = 3;
  s.client.failed = 3;
  SearchResult search{true, 40, {{10, 1, true}, {80, 9, false}, {40, 4, true}}};
  const std::string text = json_document(st, {s}, &search, 99, 5);
  rapidjson::Document d;
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError()) << text;
  EXPECT_STREQ(d["settings"]["model"].GetString(), "add_sub");
  ASSERT_EQ(d["steps"].Size(), 1u);
  const auto& j = d["steps"][0];
  EXPECT_EQ(j["concurrency"].GetDouble(), 1);
  EXPECT_EQ(j["failed"].GetInt64(), 3);
  EXPECT_EQ(j["errors"]["HTTP 400: bad input"].GetInt64(), 3);
  EXPECT_EQ(j["latency_ms"]["p99"].GetDouble(), 3);
  EXPECT_EQ(j["breakdown_us"]["server_compute_infer"].GetDouble(), 1000);
  EXPECT_EQ(d["search"]["best_rate"].GetDouble(), 40);
  EXPECT_EQ(d["search"]["probes"].Size(), 3u);
  EXPECT_NE(step_text(s).find("error x3: HTTP 400: bad input"), std::string::npos);
}

}  // namespace
}  // namespace osprey::loadgen
