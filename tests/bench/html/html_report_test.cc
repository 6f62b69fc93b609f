// The HTML benchmark report: every plot present, colours consistent per framework, text
// escaped, degenerate data (one framework, one point, all failed, empty) drawn without NaN/inf,
// axis ticks sane.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "report/report_plots.h"
#include "report/svg_chart.h"

namespace osprey::bench {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Fails on any NaN/inf spelling and on non-numeric SVG coordinates.
void expect_finite(const std::string& text) {
  std::string lower = text;
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  EXPECT_EQ(lower.find("nan"), std::string::npos) << "nan in output";
  EXPECT_EQ(std::regex_search(lower, std::regex("[^a-z]inf[^a-z]")), false) << "inf in output";
  const std::regex coord(R"re(\b(x|y|x1|x2|y1|y2|cx|cy|width|height)="([^"]*)")re");
  for (std::sregex_iterator it(text.begin(), text.end(), coord), end; it != end; ++it) {
    const std::string v = (*it)[2];
    char* e = nullptr;
    const double d = std::strtod(v.c_str(), &e);
    EXPECT_TRUE(e && *e == '\0' && std::isfinite(d)) << (*it)[0];
  }
}

Measurement measured(size_t cell, const std::string& fw, std::vector<double> lat, double rss_mib) {
  Measurement m;
  m.cell = cell;
  m.framework = fw;
  m.latencies_ms = lat;
  m.summary = summarize(lat);
  m.stable = true;
  m.load_ms = 3;
  m.first_inference_ms = 2;
  double sum = 0;
  for (double v : lat) sum += v;
  m.throughput = sum > 0 ? 1000.0 * static_cast<double>(lat.size()) / sum : 0;
  m.rss_bytes = static_cast<int64_t>(rss_mib * (1 << 20));
  m.peak_rss_bytes = 2 * m.rss_bytes;
  m.settings_json = "{\"intra_op\":1}";
  return m;
}

// model x batch {1,2} x threads {1,2}; frameworks osprey, ort, and "bad<x>" which never loads.
BenchReport sweep_report() {
  BenchReport r;
  r.osprey_version = "0.1.0";
  r.started_at = "2024-01-01T00:00:00Z";
  r.settings.models = {"/models/<tiny>&co.onnx"};
  r.settings.frameworks = {"osprey", "ort", "bad<x>"};
  r.settings.threads = {1, 2};
  r.settings.batches = {1, 2};
  r.settings.precisions = {"fp32"};
  r.settings.shape_sets = {"default"};
  r.settings.reference = "osprey";
  r.environment.cpu_model = "Test CPU";
  r.environment.warnings = {"governor is <powersave>"};
  r.frameworks = {{"osprey", true, "0.1.0", "", true, true, "pins"},
                  {"ort", true, "1.2", "", false, false, "no API"},
                  {"bad<x>", false, "", "", false, false, ""}};
  for (int64_t b : {1, 2})
    for (int t : {1, 2}) {
      Cell c;
      c.id = "m0_s0_b" + std::to_string(b) + "_t" + std::to_string(t) + "_fp32";
      c.model = r.settings.models[0];
      c.shape_label = "default";
      c.batch = b;
      c.threads = t;
      c.precision = "fp32";
      const size_t ci = r.cells.size();
      r.cells.push_back(c);
      r.measurements.push_back(measured(ci, "osprey", {1.0 * b / t, 1.2 * b / t, 1.1}, 50));
      r.measurements.push_back(measured(ci, "ort", {2.0, 2.5, 2.2, 9.0}, 80));
      Measurement bad;
      bad.cell = ci;
      bad.framework = "bad<x>";
      bad.status = CellStatus::kLoadFailed;
      bad.reason = "unsupported op <Foo> & \"bar\"";
      r.measurements.push_back(bad);
    }
  return r;
}

TEST(HtmlReport, HasEveryPlot) {
  const std::string h = html_report(sweep_report());
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(h, "class=\"plot plot-cdf\""), 4u);  // one per cell
  for (const char* id : {"cdf-m0_s0_b1_t1_fp32", "cdf-m0_s0_b2_t2_fp32", "latency-bars-m0",
                         "throughput-threads-m0-0", "throughput-batch-m0-0", "rss-bars-m0"})
    EXPECT_NE(h.find(std::string("id=\"") + id + "\""), std::string::npos) << id;
  EXPECT_EQ(count(h, "<svg"), 4u + 1 + 1 + 1 + 1);
  // A line per framework and batch in the throughput-vs-threads chart.
  EXPECT_NE(h.find("osprey, batch 2"), std::string::npos);
  EXPECT_NE(h.find("ort, threads 1"), std::string::npos);
  EXPECT_EQ(count(h, "<tr class=\"failed\">"), 4u + 1);  // 4 failed rows + framework row
}

// Affinity and shape mode: named in cell labels, and pinned / unpinned cells never share a
// throughput line.
TEST(HtmlReport, ShapeModeAndAffinityAreNamedAndChartedApart) {
  BenchReport r = sweep_report();
  r.settings.affinity = {"off", "on"};
  r.settings.shape_modes = {"fixed"};
  for (size_t ci = 0; ci < r.cells.size(); ++ci) {
    r.cells[ci].shape_mode = "fixed";
    r.cells[ci].pinned = ci % 2 == 1;  // threads 2 cells pinned
  }
  EXPECT_EQ(html::cell_label(r, r.cells[0], ", "), "batch 1, threads 1, fixed shapes, unpinned");
  EXPECT_EQ(html::cell_label(r, r.cells[1], ", "), "batch 1, threads 2, fixed shapes, pinned");
  const std::string h = html_report(r);
  EXPECT_NE(h.find("id=\"throughput-threads-m0-1\""), std::string::npos);
  EXPECT_NE(h.find("Throughput vs threads, pinned"), std::string::npos);
  EXPECT_NE(h.find("Throughput vs threads, unpinned"), std::string::npos);
  // Defaults are not spelled out.
  const BenchReport plain = sweep_report();
  EXPECT_EQ(html::cell_label(plain, plain.cells[0], ", "), "batch 1, threads 1");
  expect_finite(h);
}

TEST(HtmlReport, SelfContainedAndEscaped) {
  const std::string h = html_report(sweep_report());
  EXPECT_EQ(h.find("<script"), std::string::npos);
  EXPECT_EQ(h.find("<link"), std::string::npos);
  EXPECT_EQ(h.find("src="), std::string::npos);
  EXPECT_EQ(h.find("url("), std::string::npos);
  EXPECT_EQ(h.find("<Foo>"), std::string::npos);
  EXPECT_EQ(h.find("bad<x>"), std::string::npos);
  EXPECT_EQ(h.find("<tiny>"), std::string::npos);
  EXPECT_NE(h.find("unsupported op &lt;Foo&gt; &amp; &quot;bar&quot;"), std::string::npos);
  EXPECT_NE(h.find("data-framework=\"bad&lt;x&gt;\""), std::string::npos);
  EXPECT_NE(h.find("/models/&lt;tiny&gt;&amp;co.onnx"), std::string::npos);
  EXPECT_NE(h.find("class=\"warning\"><strong>warning:</strong> governor is &lt;powersave&gt;"),
            std::string::npos);
  EXPECT_NE(h.find("id=\"failures\" class=\"failures\""), std::string::npos);
  EXPECT_NE(h.find("load_failed in 4 cell(s)"), std::string::npos);
  EXPECT_NE(h.find("{&quot;intra_op&quot;:1}"), std::string::npos);  // settings shown
  expect_finite(h);
}

TEST(HtmlReport, FrameworkKeepsItsColourInEveryPlot) {
  const BenchReport r = sweep_report();
  const html::FrameworkColors colors(r);
  EXPECT_EQ(colors.color("osprey"), html::palette_color(0));
  EXPECT_EQ(colors.color("ort"), html::palette_color(1));
  EXPECT_NE(colors.color("osprey"), colors.color("ort"));
  const std::string h = html_report(r);
  // Every drawn element of ort carries ort's colour.
  const std::regex group(
      R"re(data-framework="ort"><title>[^<]*</title><(path|rect|text)[^>]*(stroke|fill)="([^"]+)")re");
  size_t n = 0;
  for (std::sregex_iterator it(h.begin(), h.end(), group), end; it != end; ++it, ++n)
    EXPECT_EQ((*it)[3], colors.color("ort"));
  EXPECT_GE(n, 4u + 8 + 8 + 2);  // CDF lines, latency bars, RSS bars, throughput lines
  for (size_t i = 0; i < 20; ++i) EXPECT_NE(html::palette_color(i), html::palette_color(i + 1));
}

TEST(HtmlReport, DegenerateDataRendersWithoutNanOrInf) {
  // One framework, one cell, one timed run.
  BenchReport one = sweep_report();
  one.settings.frameworks = {"osprey"};
  one.frameworks.resize(1);
  one.cells.resize(1);
  one.measurements = {measured(0, "osprey", {0.5}, 10)};
  std::string h = html_report(one);
  expect_finite(h);
  EXPECT_EQ(count(h, "<svg"), 5u);
  EXPECT_NE(h.find("<circle"), std::string::npos);  // a single point is still drawn

  // Every framework failed everywhere: plots say so, nothing is drawn from missing data.
  BenchReport failed = sweep_report();
  for (auto& m : failed.measurements) {
    Measurement blank;
    blank.cell = m.cell;
    blank.framework = m.framework;
    m = blank;
    m.status = CellStatus::kRunFailed;
    m.reason = "peer exited";
  }
  h = html_report(failed);
  expect_finite(h);
  EXPECT_GE(count(h, "no data to plot"), 4u + 2);
  EXPECT_NE(h.find(">n/a</text>"), std::string::npos);
  EXPECT_EQ(count(h, "<tr class=\"failed\">"), 12u + 1);

  // All latencies and memory zero: every axis is a single value.
  BenchReport zeros = sweep_report();
  for (auto& m : zeros.measurements)
    if (m.status == CellStatus::kOk) m = measured(m.cell, m.framework, {0, 0, 0}, 0);
  h = html_report(zeros);
  expect_finite(h);
  EXPECT_EQ(count(h, "<svg"), 8u);

  // No cells at all.
  BenchReport empty;
  empty.settings.models = {"/m.onnx"};
  h = html_report(empty);
  expect_finite(h);
  EXPECT_NE(h.find("Every framework ran in every cell."), std::string::npos);
}

TEST(SvgChart, NiceTicksCoverTheRangeWithRoundSteps) {
  const auto t = html::nice_ticks(0.13, 9.7, 5);
  ASSERT_GE(t.size(), 3u);
  EXPECT_LE(t.front(), 0.13);
  EXPECT_GE(t.back(), 9.7);
  EXPECT_LE(t.size(), 12u);
  const double step = t[1] - t[0];
  for (size_t i = 1; i < t.size(); ++i) EXPECT_NEAR(t[i] - t[i - 1], step, 1e-9);
  const double mant = step / std::pow(10.0, std::floor(std::log10(step)));
  EXPECT_TRUE(std::fabs(mant - 1) < 1e-9 || std::fabs(mant - 2) < 1e-9 ||
              std::fabs(mant - 2.5) < 1e-9 || std::fabs(mant - 5) < 1e-9)
      << step;
  // Degenerate ranges are padded and never produce non-finite ticks.
  for (auto [lo, hi] : std::vector<std::pair<double, double>>{
           {3, 3}, {0, 0}, {5, 1}, {NAN, 2}, {0, INFINITY}, {1e-9, 1e-9}}) {
    const auto d = html::nice_ticks(lo, hi, 5);
    ASSERT_GE(d.size(), 2u) << lo << " " << hi;
    for (double v : d) EXPECT_TRUE(std::isfinite(v));
    EXPECT_LT(d.front(), d.back());
  }
  const auto lt = html::log_ticks(0.3, 40);
  EXPECT_EQ(lt.front(), 0.1);
  EXPECT_EQ(lt.back(), 100);
}

TEST(SvgChart, LineChartHasAxesTicksLegendAndUnits) {
  html::LineChart ch;
  ch.id = "c<1>";
  ch.title = "T & t";
  ch.x_label = "latency (ms)";
  ch.y_label = "runs (%)";
  ch.series = {{"a<b", "a", "#123456", "", {{1, 0}, {2, 50}, {3, 100}}, false}};
  const std::string s = html::render_line_chart(ch);
  EXPECT_NE(s.find("id=\"c&lt;1&gt;\""), std::string::npos);
  EXPECT_NE(s.find("T &amp; t"), std::string::npos);
  EXPECT_NE(s.find(">a&lt;b</text>"), std::string::npos);  // legend
  EXPECT_NE(s.find("latency (ms)"), std::string::npos);
  EXPECT_NE(s.find("runs (%)"), std::string::npos);
  EXPECT_GE(count(s, "class=\"tick\""), 6u);
  EXPECT_NE(s.find(">1.0</text>"), std::string::npos);  // x ticks at 0.5 steps
  EXPECT_NE(s.find(">3.0</text>"), std::string::npos);
  EXPECT_EQ(count(s, "class=\"line\""), 1u);
  expect_finite(s);
  ch.x_scale = html::XScale::kLog;
  // x = 0 cannot be drawn on a log axis, nor NaN or inf anywhere.
  ch.series[0].points = {{0, 1}, {0.01, 50}, {NAN, 60}, {5, INFINITY}, {100, 100}};
  const std::string l = html::render_line_chart(ch);
  EXPECT_NE(l.find("3 point(s) not finite, not drawn"), std::string::npos);
  expect_finite(l);
}

TEST(SvgChart, FormatNumber) {
  EXPECT_EQ(html::format_number(1.23456, 3), "1.23");
  EXPECT_EQ(html::format_number(1234.6, 3), "1235");
  EXPECT_EQ(html::format_number(0, 3), "0.00");
  EXPECT_EQ(html::format_number(NAN), "-");
  EXPECT_EQ(html::format_number(INFINITY), "-");
  EXPECT_EQ(html::escape("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
}

TEST(HtmlReport, WriteCreatesTheFileAndReportsErrors) {
  const std::string dir = ::testing::TempDir() + "/osprey_html_report";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(write_html_report(sweep_report(), dir).ok());
  std::ifstream f(dir + "/report.html");
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), html_report(sweep_report()));
  std::ofstream(dir + "/blocker") << "x";
  const Status st = write_html_report(sweep_report(), dir + "/blocker/sub");
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("blocker"), std::string::npos);
}

}  // namespace
}  // namespace osprey::bench
