#include "core/orchestrator.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "fake_runner.h"

namespace osprey::bench {
namespace {

using testing::FakeRunner;

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/osprey_bench_orch_" + name;
  std::filesystem::remove_all(d);
  return d;
}

BenchReport report_with_cells(int n, int64_t batch = 1) {
  BenchReport r;
  for (int i = 0; i < n; ++i) {
    Cell c;
    c.id = "c" + std::to_string(i);
    c.model = "/m.onnx";
    c.batch = batch;
    c.threads = i + 1;
    c.precision = "fp32";
    c.inputs_dir = "/inputs";
    r.cells.push_back(c);
  }
  return r;
}

OrchestratorOptions iterations_plan(int total, int window, const std::string& dir) {
  OrchestratorOptions o;
  o.warmup = 2;
  o.plan.mode = MeasureMode::kIterations;
  o.plan.iterations = total;
  o.plan.window_iterations = window;
  o.reference = "a";
  o.work_dir = dir;
  return o;
}

TEST(BenchOrchestrator, FrameworksAlternateWindowByWindow) {
  std::vector<std::string> log;
  FakeRunner a("a", &log), b("b", &log);
  BenchReport r = report_with_cells(1);
  ASSERT_TRUE(run_benchmark({&a, &b}, iterations_plan(6, 2, temp_dir("alt")), &r, nullptr).ok());
  const std::vector<std::string> want = {
      "a:hello",        "b:hello",                 // once per run
      "a:load t1 fp32", "a:run 1+0", "a:run 1+1",  // load, first inference, warmup
      "b:load t1 fp32", "b:run 1+0", "b:run 1+1", "a:run 2+0", "b:run 2+0",
      "a:run 2+0",      "b:run 2+0", "a:run 2+0", "b:run 2+0",  // A B A B A B
      "a:outputs",      "b:outputs"};
  EXPECT_EQ(log, want);
  ASSERT_EQ(r.measurements.size(), 2u);
  for (const auto& m : r.measurements) {
    EXPECT_EQ(m.status, CellStatus::kOk);
    EXPECT_EQ(m.summary.count, 6u);
    EXPECT_EQ(m.window_p50_ms.size(), 3u);
    EXPECT_DOUBLE_EQ(m.load_ms, 12.5);
    EXPECT_DOUBLE_EQ(m.first_inference_ms, 5.0);
    EXPECT_DOUBLE_EQ(m.summary.p50, 1.0);
    EXPECT_EQ(m.peak_rss_bytes, 200 << 20);
  }
}

TEST(BenchOrchestrator, EveryCellHasEveryFrameworkEvenUnavailableOrFailing) {
  std::vector<std::string> log;
  FakeRunner a("a", &log), gone("gone", &log), broken("broken", &log), flaky("flaky", &log);
  gone.available = false;
  broken.fail_load = true;
  flaky.fail_on_timed_window = 1;
  BenchReport r = report_with_cells(2);
  ASSERT_TRUE(run_benchmark({&a, &gone, &broken, &flaky}, iterations_plan(4, 2, temp_dir("fail")),
                            &r, nullptr)
                  .ok());
  ASSERT_EQ(r.measurements.size(), 2u * 4);
  ASSERT_EQ(r.frameworks.size(), 4u);
  EXPECT_FALSE(r.frameworks[1].available);
  EXPECT_NE(r.frameworks[1].reason.find("not installed"), std::string::npos);
  for (size_t c = 0; c < 2; ++c) {
    const Measurement* m = &r.measurements[c * 4];
    EXPECT_EQ(m[0].status, CellStatus::kOk);
    EXPECT_EQ(m[0].cell, c);
    EXPECT_EQ(m[1].status, CellStatus::kUnavailable);
    EXPECT_NE(m[1].reason.find("not installed"), std::string::npos);
    EXPECT_EQ(m[2].status, CellStatus::kLoadFailed);
    EXPECT_EQ(m[2].reason, "unsupported op Foo");
  }
  // flaky fails its second timed window overall (in cell 0) and is then reported, not dropped.
  EXPECT_EQ(r.measurements[3].status, CellStatus::kRunFailed);
  EXPECT_NE(r.measurements[3].reason.find("stderr tail: boom"), std::string::npos);
  EXPECT_EQ(r.measurements[7].status, CellStatus::kOk);
  // The unavailable framework is never asked to load.
  for (const auto& line : log) EXPECT_EQ(line.find("gone:load"), std::string::npos) << line;
}

TEST(BenchOrchestrator, UntilStableStopsEachFrameworkOnItsOwn) {
  std::vector<std::string> log;
  FakeRunner steady("steady", &log), noisy("noisy", &log);
  noisy.window_latency_us = {1000, 3000, 1000, 3000, 1000, 3000, 1000, 3000};
  BenchReport r = report_with_cells(1);
  OrchestratorOptions o;
  o.warmup = 1;
  o.plan.window_iterations = 3;
  o.plan.max_windows = 6;
  o.work_dir = temp_dir("stable");
  ASSERT_TRUE(run_benchmark({&steady, &noisy}, o, &r, nullptr).ok());
  EXPECT_TRUE(r.measurements[0].stable);
  EXPECT_EQ(r.measurements[0].window_p50_ms.size(), 3u);
  EXPECT_FALSE(r.measurements[1].stable);
  EXPECT_EQ(r.measurements[1].window_p50_ms.size(), 6u);  // gave up at max windows
  EXPECT_EQ(r.measurements[1].summary.count, 18u);
}

TEST(BenchOrchestrator, ThroughputCountsBatchItems) {
  std::vector<std::string> log;
  FakeRunner a("a", &log);
  BenchReport r = report_with_cells(1, /*batch=*/4);
  ASSERT_TRUE(run_benchmark({&a}, iterations_plan(10, 5, temp_dir("tput")), &r, nullptr).ok());
  EXPECT_DOUBLE_EQ(r.measurements[0].throughput, 4000.0);  // 4 items per 1 ms call
}

TEST(BenchOrchestrator, OutputsAreComparedWithTheReference) {
  std::vector<std::string> log;
  FakeRunner a("a", &log), b("b", &log), c("c", &log);
  b.output = {1, 2, 3.3f};
  c.output = {1, 2};
  BenchReport r = report_with_cells(1);
  ASSERT_TRUE(
      run_benchmark({&a, &b, &c}, iterations_plan(2, 2, temp_dir("agree")), &r, nullptr).ok());
  EXPECT_EQ(r.measurements[0].agreement_note, "reference for output agreement");
  ASSERT_EQ(r.measurements[1].agreement.size(), 1u);
  EXPECT_EQ(r.measurements[1].agreement_reference, "a");
  EXPECT_NEAR(r.measurements[1].agreement[0].max_abs, 0.3, 1e-6);
  ASSERT_EQ(r.measurements[2].agreement.size(), 1u);
  EXPECT_FALSE(r.measurements[2].agreement[0].compared);
  EXPECT_NE(r.measurements[2].agreement[0].note.find("shape"), std::string::npos);
}

TEST(BenchOrchestrator, LoadOptionsGoToTheirFrameworkOnly) {
  std::vector<std::string> log;
  FakeRunner a("a", &log), b("b", &log);
  BenchReport r = report_with_cells(1);
  OrchestratorOptions o = iterations_plan(2, 2, temp_dir("opts"));
  o.load_options_json["b"] = "{\"performance_hint\":\"THROUGHPUT\"}";
  ASSERT_TRUE(run_benchmark({&a, &b}, o, &r, nullptr).ok());
  EXPECT_EQ(a.last_options_json, "{}");
  EXPECT_EQ(b.last_options_json, "{\"performance_hint\":\"THROUGHPUT\"}");
}

// A pinned cell goes to a framework that pins with pin_threads set; one that cannot pin is
// reported unavailable with its reason and is never loaded for it. A fixed cell loads its copy.
TEST(BenchOrchestrator, PinnedAndFixedCellsReachTheRunners) {
  std::vector<std::string> log;
  FakeRunner pins("pins", &log), cannot("cannot", &log);
  pins.pins_threads = true;
  BenchReport r = report_with_cells(2);
  r.cells[1].pinned = true;
  r.cells[1].shape_mode = "fixed";
  r.cells[1].model_file = "/work/models/m0_s0_b1_fixed.onnx";
  r.cells[1].setup_note = "fixed shapes: test copy";
  OrchestratorOptions o = iterations_plan(2, 2, temp_dir("pin"));
  o.reference = "pins";
  ASSERT_TRUE(run_benchmark({&pins, &cannot}, o, &r, nullptr).ok());
  ASSERT_EQ(r.measurements.size(), 4u);
  EXPECT_EQ(r.measurements[0].status, CellStatus::kOk);
  EXPECT_EQ(r.measurements[1].status, CellStatus::kOk);  // unpinned: runs
  EXPECT_EQ(r.measurements[2].status, CellStatus::kOk);
  EXPECT_NE(r.measurements[2].notes.find("fixed shapes: test copy"), std::string::npos);
  EXPECT_EQ(r.measurements[3].status, CellStatus::kUnavailable);
  EXPECT_EQ(r.measurements[3].reason,
            "thread pinning is not supported by cannot: no pinning API in the fake");
  EXPECT_EQ(pins.last_model, "/work/models/m0_s0_b1_fixed.onnx");
  EXPECT_TRUE(pins.last_pin_threads);
  EXPECT_EQ(cannot.last_model, "/m.onnx");  // its last load was the unpinned dynamic cell
  EXPECT_FALSE(cannot.last_pin_threads);
  EXPECT_EQ(r.frameworks[0].pins_threads, true);
  EXPECT_EQ(r.frameworks[1].pin_threads_note, "no pinning API in the fake");
}

TEST(BenchOrchestrator, BadOptionsAreErrors) {
  std::vector<std::string> log;
  FakeRunner a("a", &log);
  BenchReport r = report_with_cells(1);
  OrchestratorOptions o = iterations_plan(0, 2, temp_dir("bad"));
  EXPECT_EQ(run_benchmark({&a}, o, &r, nullptr).code(), StatusCode::kInvalidArgument);
  o = iterations_plan(2, 2, "");
  EXPECT_EQ(run_benchmark({&a}, o, &r, nullptr).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey::bench
