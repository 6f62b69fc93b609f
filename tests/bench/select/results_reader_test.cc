#include "select/results_reader.h"

#include <gtest/gtest.h>

#include "select/ranking.h"

namespace osprey::bench::select {
namespace {

const std::string kFixture = std::string(OSPREY_SELECT_FIXTURES) + "/bench_results.json";

TEST(SelectReader, ReadsABenchResultsJson) {
  auto r = read_results(kFixture);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 6u);  // 2 cells x 3 frameworks
  const Candidate& osp = (*r)[0];
  EXPECT_EQ(osp.framework, "osprey");
  EXPECT_EQ(osp.version, "0.1.0");
  EXPECT_EQ(osp.model, "/tmp/fixture/tiny.onnx");
  EXPECT_EQ(osp.threads, 1);
  EXPECT_EQ(osp.batch, 1);
  EXPECT_EQ(osp.precision, "fp32");
  EXPECT_EQ(osp.shapes, "default");
  EXPECT_TRUE(osp.ok);
  EXPECT_TRUE(osp.is_reference);
  EXPECT_DOUBLE_EQ(osp.latency(LatencyStat::kP99), 0.030);
  EXPECT_DOUBLE_EQ(osp.latency(LatencyStat::kMax), 0.031);
  EXPECT_DOUBLE_EQ(osp.throughput, 48000);
  EXPECT_EQ(osp.peak_rss_bytes, 41943040);
  EXPECT_DOUBLE_EQ(osp.cold_start_ms(), 3.7);
  const Candidate& ort = (*r)[1];
  EXPECT_EQ(ort.framework, "onnxruntime");
  EXPECT_EQ(ort.version, "1.17.0");
  EXPECT_FALSE(ort.is_reference);
  EXPECT_DOUBLE_EQ(ort.min_cosine, 0.99999999);
  EXPECT_DOUBLE_EQ(ort.min_top1, 1);
  const Candidate& gone = (*r)[2];
  EXPECT_FALSE(gone.ok);
  EXPECT_EQ(gone.reason, "unavailable: no adapter bench/peers/nosuchfw.py");
  EXPECT_EQ((*r)[3].threads, 2);
}

TEST(SelectReader, FixtureRanksAsExpected) {
  auto r = read_results(kFixture);
  ASSERT_TRUE(r.ok());
  SelectOptions o;
  o.constraints.sla = parse_sla("p99<=40us").value();
  auto s = select_candidates(*r, o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  // onnxruntime at 2 threads has p99 45 us: out. nosuchfw twice: out.
  ASSERT_EQ(s->ranking.size(), 3u);
  ASSERT_EQ(s->ineligible.size(), 3u);
  EXPECT_EQ(s->ineligible[0].candidate.framework, "nosuchfw");
  EXPECT_EQ(s->ineligible[2].candidate.framework, "onnxruntime");
  EXPECT_EQ(s->ineligible[2].reasons[0], "p99 0.045 ms > 0.040 ms");
  // onnxruntime t1: best latency and throughput (0.7), worst memory and cold start.
  EXPECT_EQ(s->ranking[0].candidate.framework, "onnxruntime");
  EXPECT_EQ(s->ranking[0].candidate.threads, 1);
}

TEST(SelectReader, AffinityAndShapeModeTellCellsApart) {
  const std::string text = R"({"cells": [
      {"id": "a", "model": "m", "threads": 2},
      {"id": "b", "model": "m", "threads": 2, "affinity": "on", "shape_mode": "fixed"}],
    "measurements": [
      {"cell": "a", "framework": "osprey", "status": "ok", "summary": {"p50_ms": 1, "p99_ms": 2}},
      {"cell": "b", "framework": "osprey", "status": "ok", "summary": {"p50_ms": 1, "p99_ms": 2}}]})";
  auto r = parse_results(text, "f.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].affinity, "off");
  EXPECT_EQ((*r)[0].shape_mode, "dynamic");
  EXPECT_EQ((*r)[1].affinity, "on");
  EXPECT_EQ((*r)[1].shape_mode, "fixed");
  EXPECT_EQ(config_label((*r)[0]).find("affinity"), std::string::npos);
  EXPECT_NE(config_label((*r)[1]).find("shape_mode=fixed affinity=on"), std::string::npos)
      << config_label((*r)[1]);
}

TEST(SelectReader, ReadsACandidateList) {
  const std::string text = R"({"format": "osprey-candidates-1", "candidates": [
    {"framework": "osprey", "model": "m.onnx", "threads": 4, "batch": 8, "precision": "fp32",
     "p50_ms": 1, "p99_ms": 2, "throughput_items_per_s": 4000, "peak_rss_bytes": 1000,
     "load_ms": 10, "first_inference_ms": 2, "is_reference": true},
    {"framework": "openvino", "model": "m.onnx", "status": "run_failed", "reason": "crashed"}]})";
  auto r = parse_results(text, "perf.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].threads, 4);
  EXPECT_EQ((*r)[0].batch, 8);
  EXPECT_DOUBLE_EQ((*r)[0].latency(LatencyStat::kP99), 2);
  EXPECT_DOUBLE_EQ((*r)[0].latency(LatencyStat::kP90), -1);
  EXPECT_DOUBLE_EQ((*r)[0].cold_start_ms(), 12);
  EXPECT_TRUE((*r)[0].is_reference);
  EXPECT_EQ((*r)[0].source, "perf.json");
  EXPECT_FALSE((*r)[1].ok);
  EXPECT_EQ((*r)[1].reason, "run_failed: crashed");
}

TEST(SelectReader, BadFilesAreNamed) {
  const std::pair<const char*, const char*> bad[] = {
      {"{not json", "f.json: not valid JSON at offset 1"},
      {"[1, 2]", "f.json: expected a JSON object"},
      {"{\"a\": 1}", "f.json: neither an `osprey bench` results.json"},
      {R"({"format": "v9", "candidates": []})", "unknown 'format'"},
      {R"({"format": "osprey-candidates-1", "candidates": [{"model": "m"}]})",
       "f.json: candidates[0]: 'framework' is missing"},
      {R"({"format": "osprey-candidates-1", "candidates": [{"framework": "x", "model": "m",
          "p99_ms": "fast"}]})",
       "candidates[0]: 'p99_ms' is not a number"},
      {R"({"cells": [], "measurements": [{"cell": "c9", "framework": "x", "status": "ok"}]})",
       "measurements[0]: unknown cell 'c9'"},
      {R"({"cells": [{"id": "c", "model": "m"}], "measurements": [{"cell": "c",
          "framework": "x", "status": "ok"}]})",
       "status ok but no 'summary'"},
  };
  for (const auto& [text, want] : bad) {
    auto r = parse_results(text, "f.json");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
  auto missing = read_results("/nonexistent/results.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/results.json"), std::string::npos);
}

}  // namespace
}  // namespace osprey::bench::select
