#include "core/reports.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/orchestrator.h"
#include "fake_runner.h"

namespace osprey::bench {
namespace {

// A tiny real run through the orchestrator with fake frameworks: 2 cells x 3 frameworks.
BenchReport tiny_report(const std::string& dir) {
  static std::vector<std::string> log;
  static testing::FakeRunner a("osprey", &log), b("peer, \"quoted\"", &log), gone("gone", &log);
  b.output = {1, 2, 3.5f};
  gone.available = false;
  BenchReport r;
  r.osprey_version = "0.1.0";
  r.started_at = "2024-01-01T00:00:00Z";
  r.settings.models = {"/m.onnx"};
  r.settings.frameworks = {"osprey", "peer", "gone"};
  r.settings.threads = {1, 2};
  r.settings.batches = {1};
  r.settings.precisions = {"fp32"};
  r.settings.shape_sets = {"default"};
  r.settings.reference = "osprey";
  r.environment.cpu_model = "Test CPU";
  r.environment.warnings = {"CPU clock low"};
  for (int t : {1, 2}) {
    Cell c;
    c.id = "m0_s0_b1_t" + std::to_string(t) + "_fp32";
    c.model = "/m.onnx";
    c.shape_label = "default";
    c.threads = t;
    c.precision = "fp32";
    c.inputs = {{"x", DType::kFloat32, {1, 3}, "random uniform, seed 0"}};
    r.cells.push_back(c);
  }
  OrchestratorOptions o;
  o.warmup = 1;
  o.plan.mode = MeasureMode::kIterations;
  o.plan.iterations = 4;
  o.plan.window_iterations = 2;
  o.work_dir = dir;
  r.settings.plan = o.plan;
  EXPECT_TRUE(run_benchmark({&a, &b, &gone}, o, &r, nullptr).ok());
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream is(text);
  std::string l;
  while (std::getline(is, l)) out.push_back(l);
  return out;
}

TEST(BenchReports, CsvHasHeaderAndOneRowPerMeasurement) {
  const BenchReport r = tiny_report(::testing::TempDir() + "/osprey_bench_rep_csv");
  const auto rows = lines(csv_report(r));
  ASSERT_EQ(rows.size(), 1u + 2 * 3);
  std::string header;
  for (const auto& c : csv_columns()) header += (header.empty() ? "" : ",") + c;
  EXPECT_EQ(rows[0], header);
  EXPECT_EQ(rows[1].rfind("/m.onnx,default,1,dynamic,1,off,fp32,osprey,9.9,ok,", 0), 0u) << rows[1];
  EXPECT_NE(rows[2].find("\"peer, \"\"quoted\"\"\""), std::string::npos) << rows[2];  // CSV quoting
  EXPECT_NE(rows[3].find("unavailable,pip package gone not installed"), std::string::npos)
      << rows[3];
  EXPECT_NE(rows[5].find(",1,100,200,osprey,"), std::string::npos) << rows[5];  // ratio 1, RSS MiB
}

TEST(BenchReports, JsonParsesBackWithEverything) {
  const BenchReport r = tiny_report(::testing::TempDir() + "/osprey_bench_rep_json");
  const std::string text = json_report(r);
  rapidjson::Document d;
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_STREQ(d["environment"]["cpu_model"].GetString(), "Test CPU");
  EXPECT_EQ(d["environment"]["warnings"].Size(), 1u);
  EXPECT_STREQ(d["settings"]["mode"].GetString(), "iterations");
  EXPECT_EQ(d["settings"]["threads"].Size(), 2u);
  EXPECT_EQ(d["frameworks"].Size(), 3u);
  EXPECT_FALSE(d["frameworks"][2]["available"].GetBool());
  EXPECT_EQ(d["cells"].Size(), 2u);
  const auto& ms = d["measurements"];
  ASSERT_EQ(ms.Size(), 6u);
  const auto& m0 = ms[0];
  EXPECT_STREQ(m0["status"].GetString(), "ok");
  EXPECT_EQ(m0["settings"]["threads"].GetInt(), 1);
  EXPECT_EQ(m0["latencies_ms"].Size(), 4u);
  EXPECT_DOUBLE_EQ(m0["summary"]["p50_ms"].GetDouble(), 1.0);
  EXPECT_EQ(m0["window_p50_ms"].Size(), 2u);
  EXPECT_EQ(m0["peak_rss_bytes"].GetInt64(), 200 << 20);
  const auto& m1 = ms[1];
  EXPECT_STREQ(m1["agreement"]["reference"].GetString(), "osprey");
  EXPECT_NEAR(m1["agreement"]["outputs"][0]["max_abs"].GetDouble(), 0.5, 1e-6);
  EXPECT_STREQ(ms[2]["status"].GetString(), "unavailable");
  EXPECT_FALSE(ms[2].HasMember("summary"));
}

TEST(BenchReports, MarkdownHasATableRowPerMeasurementAndTheEnvironment) {
  const BenchReport r = tiny_report(::testing::TempDir() + "/osprey_bench_rep_md");
  const std::string md = markdown_report(r);
  int rows = 0;
  for (const auto& l : lines(md))
    if (l.rfind("| default |", 0) == 0) ++rows;
  EXPECT_EQ(rows, 6);
  EXPECT_NE(md.find("| p50 |"), std::string::npos);
  EXPECT_NE(md.find("unavailable: pip package gone not installed"), std::string::npos);
  EXPECT_NE(md.find("Test CPU"), std::string::npos);
  EXPECT_NE(md.find("**warning**: CPU clock low"), std::string::npos);
  EXPECT_NE(md.find("max abs 0.5"), std::string::npos);
  EXPECT_NE(md.find("`{\"threads\":1}`"), std::string::npos);  // settings as reported
}

// The shape-mode and affinity of each cell reach every format.
TEST(BenchReports, ShapeModeAndAffinityColumns) {
  BenchReport r = tiny_report(::testing::TempDir() + "/osprey_bench_rep_axes");
  r.settings.affinity = {"off", "on"};
  r.settings.shape_modes = {"dynamic", "fixed"};
  r.cells[1].pinned = true;
  r.cells[1].shape_mode = "fixed";
  r.cells[1].model_file = "/out/models/m0_s0_b1_fixed.onnx";
  r.cells[1].setup_note = "fixed shapes: x: N -> 1";
  const auto cols = csv_columns();
  const auto at = [&](const std::string& name) {
    return std::find(cols.begin(), cols.end(), name) - cols.begin();
  };
  EXPECT_EQ(at("shape_mode"), at("batch") + 1);
  EXPECT_EQ(at("affinity"), at("threads") + 1);
  const auto rows = lines(csv_report(r));
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_EQ(rows[1].rfind("/m.onnx,default,1,dynamic,1,off,fp32,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[4].rfind("/m.onnx,default,1,fixed,2,on,fp32,", 0), 0u) << rows[4];

  rapidjson::Document d;
  const std::string text = json_report(r);
  d.Parse(text.c_str());
  ASSERT_FALSE(d.HasParseError());
  EXPECT_EQ(d["settings"]["affinity"].Size(), 2u);
  EXPECT_STREQ(d["settings"]["shape_modes"][1].GetString(), "fixed");
  const auto& c0 = d["cells"][0];
  const auto& c1 = d["cells"][1];
  EXPECT_STREQ(c0["shape_mode"].GetString(), "dynamic");
  EXPECT_STREQ(c0["affinity"].GetString(), "off");
  EXPECT_STREQ(c0["model_file"].GetString(), "/m.onnx");
  EXPECT_STREQ(c1["shape_mode"].GetString(), "fixed");
  EXPECT_STREQ(c1["affinity"].GetString(), "on");
  EXPECT_STREQ(c1["model_file"].GetString(), "/out/models/m0_s0_b1_fixed.onnx");
  EXPECT_STREQ(c1["setup_note"].GetString(), "fixed shapes: x: N -> 1");
  EXPECT_TRUE(d["frameworks"][0].HasMember("pins_threads"));

  const std::string md = markdown_report(r);
  EXPECT_NE(md.find("| shapes | batch | shape mode | threads | affinity | precision |"),
            std::string::npos);
  EXPECT_NE(md.find("| default | 1 | fixed | 2 | on | fp32 | osprey |"), std::string::npos);
}

TEST(BenchReports, WriteReportsCreatesTheThreeFiles) {
  const std::string dir = ::testing::TempDir() + "/osprey_bench_rep_files";
  const BenchReport r = tiny_report(dir + "_work");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_reports(r, dir).ok());
  for (const char* f : {"results.csv", "results.json", "summary.md"}) {
    EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/" + f)) << f;
    EXPECT_GT(std::filesystem::file_size(dir + "/" + f), 100u) << f;
  }
  std::ofstream(dir + "/blocker") << "x";
  EXPECT_FALSE(write_reports(r, dir + "/blocker/sub").ok());
}

}  // namespace
}  // namespace osprey::bench
