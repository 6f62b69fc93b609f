#include "report/html_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/reports.h"
#include "report/report_plots.h"
#include "report/svg_chart.h"

namespace osprey::bench {
namespace {

using html::escape;
using html::format_number;

const char kStyle[] = R"(
body { font-family: sans-serif; margin: 24px; color: #222; background: #fafafa; }
h1 { font-size: 22px; } h2 { font-size: 18px; margin-top: 28px; border-bottom: 1px solid #ccc; }
h3 { font-size: 15px; margin-bottom: 4px; }
.note { color: #555; font-size: 13px; margin: 2px 0 8px; }
.plots { display: flex; flex-wrap: wrap; gap: 12px; overflow-x: auto; }
svg.plot { background: #fff; border: 1px solid #ddd; }
svg text { font-family: sans-serif; font-size: 11px; fill: #222; }
svg text.chart-title { font-size: 13px; font-weight: bold; }
svg text.axis-label { font-size: 12px; }
svg text.chart-note, svg text.no-data { fill: #666; }
svg text.na { font-size: 10px; }
table { border-collapse: collapse; font-size: 12px; background: #fff; margin: 6px 0 12px; }
th, td { border: 1px solid #ccc; padding: 3px 6px; text-align: right; vertical-align: top; }
th { background: #eee; } td.t { text-align: left; }
tr.failed td { background: #fdecea; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 5px; }
.warning { background: #fff3cd; border-left: 4px solid #e0a800; padding: 4px 8px; margin: 4px 0; }
.failures { background: #fdecea; border-left: 4px solid #c0392b; padding: 6px 10px; }
.failures li { margin: 3px 0; }
code { font-size: 12px; word-break: break-all; }
)";

std::string num(double v, int sig = 4) {
  return std::isfinite(v) ? format_number(v, sig) : "-";
}
std::string opt(double v, int sig = 4) {
  return v < 0 ? "-" : num(v, sig);
}
std::string mib(int64_t b) {
  return b < 0 ? "-" : num(static_cast<double>(b) / (1 << 20), 4);
}
std::string td(const std::string& s) {
  return "<td>" + escape(s) + "</td>";
}
std::string td_text(const std::string& s) {
  return "<td class=\"t\">" + escape(s) + "</td>";
}
std::string swatch(const std::string& color) {
  return "<span class=\"swatch\" style=\"background:" + escape(color) + "\"></span>";
}

std::string agreement_text(const Measurement& m) {
  if (m.agreement_reference.empty()) return m.agreement_note.empty() ? "-" : m.agreement_note;
  if (m.agreement_reference == m.framework) return "reference";
  const AgreementSummary agree = summarize_agreement(m);
  const double max_abs = std::max(0.0, agree.max_abs), cos = std::min(1.0, agree.cosine);
  const double top1 = agree.top1;
  const std::string& notes = agree.notes;
  std::string s;
  if (agree.compared > 0) {
    s = "max abs " + num(max_abs, 2) + ", cos " + num(cos, 6);
    if (top1 >= 0) s += ", top-1 " + num(100 * top1, 3) + "%";
    s += " vs " + m.agreement_reference;
  }
  if (!notes.empty()) s += (s.empty() ? "" : "; ") + notes;
  return s.empty() ? "-" : s;
}

// Every measurement that did not run, grouped by framework, status and reason.
std::string failures(const BenchReport& r) {
  struct Group {
    std::string framework, status, reason;
    std::vector<std::string> cells;
  };
  std::vector<Group> groups;
  for (const auto& m : r.measurements) {
    if (m.status == CellStatus::kOk) continue;
    const std::string status = cell_status_name(m.status);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.framework == m.framework && g.status == status && g.reason == m.reason;
    });
    if (it == groups.end()) {
      groups.push_back({m.framework, status, m.reason, {}});
      it = groups.end() - 1;
    }
    it->cells.push_back(r.cells[m.cell].id);
  }
  if (groups.empty())
    return "<p id=\"failures\" class=\"note\">Every framework ran in every cell.</p>\n";
  std::string s = "<div id=\"failures\" class=\"failures\"><strong>Could not run:</strong><ul>";
  for (const auto& g : groups) {
    std::string cells;
    for (const auto& c : g.cells) cells += (cells.empty() ? "" : ", ") + c;
    s += "<li class=\"failure\"><strong>" + escape(g.framework) + "</strong> " + escape(g.status) +
         " in " + std::to_string(g.cells.size()) + " cell(s) (" + escape(cells) +
         "): " + escape(g.reason.empty() ? "no reason given" : g.reason) + "</li>";
  }
  return s + "</ul></div>\n";
}

std::string results_table(const BenchReport& r, size_t mi, const html::FrameworkColors& colors) {
  std::string s =
      "<table class=\"results\"><tr><th>cell</th><th>framework</th><th>status</th><th>P50</th>"
      "<th>P90</th><th>P95</th><th>P99</th><th>max</th><th>mean ± stdev</th><th>items/s</th>"
      "<th>x ref</th><th>load ms</th><th>first ms</th><th>RSS MiB</th><th>peak RSS MiB</th>"
      "<th>runs</th><th>stable</th><th>output agreement</th></tr>\n";
  for (const auto& m : r.measurements) {
    const Cell& c = r.cells[m.cell];
    if (c.model != r.settings.models[mi]) continue;
    const bool ok = m.status == CellStatus::kOk;
    const Summary& q = m.summary;
    s += ok ? "<tr>" : "<tr class=\"failed\">";
    s += td_text(html::cell_label(r, c, ", ")) + "<td class=\"t\">" +
         swatch(colors.color(m.framework)) + escape(m.framework) + "</td>";
    s += td_text(ok ? "ok" : std::string(cell_status_name(m.status)) + ": " + m.reason);
    if (ok) {
      s += td(num(q.p50)) + td(num(q.p90)) + td(num(q.p95)) + td(num(q.p99)) + td(num(q.max)) +
           td(num(q.mean) + " ± " + num(q.stdev, 2)) + td(num(m.throughput)) +
           td(ratio_to_reference(r, m) < 0 ? "-" : num(ratio_to_reference(r, m), 3) + "x");
    } else {
      for (int i = 0; i < 8; ++i) s += td("-");
    }
    s += td(opt(m.load_ms)) + td(opt(m.first_inference_ms)) + td(mib(m.rss_bytes)) +
         td(mib(m.peak_rss_bytes)) + td(ok ? std::to_string(q.count) : "-") +
         td(ok ? (m.stable ? "yes" : "no") : "-") + td_text(agreement_text(m)) + "</tr>\n";
  }
  return s + "</table>\n";
}

std::string frameworks_section(const BenchReport& r, const html::FrameworkColors& colors) {
  std::string s =
      "<table id=\"frameworks\"><tr><th>framework</th><th>version</th><th>available</th>"
      "<th>how it runs</th><th>settings it chose (first cell where it loaded)</th></tr>\n";
  for (const auto& fw : r.frameworks) {
    const Measurement* first = nullptr;
    for (const auto& m : r.measurements)
      if (m.framework == fw.name && m.status != CellStatus::kUnavailable &&
          m.status != CellStatus::kLoadFailed) {
        first = &m;
        break;
      }
    std::string settings = "-";
    if (first) {
      settings = "<code>" + escape(first->settings_json) + "</code>, precision used " +
                 escape(first->precision_used.empty() ? "-" : first->precision_used) +
                 (first->notes.empty() ? "" : "; " + escape(first->notes));
    }
    s += std::string(fw.available ? "<tr>" : "<tr class=\"failed\">") + "<td class=\"t\">" +
         swatch(colors.color(fw.name)) + escape(fw.name) + "</td>" +
         td_text(fw.version.empty() ? "-" : fw.version) +
         td_text(fw.available ? "yes" : "no: " + fw.reason) +
         td_text(fw.in_process ? "in the benchmark process" : "own process, through its adapter") +
         "<td class=\"t\">" + settings + "</td></tr>\n";
  }
  return s + "</table>\n";
}

std::string environment_section(const Environment& e) {
  std::string flags;
  for (const auto& f : e.cpu_flags) flags += (flags.empty() ? "" : " ") + f;
  std::string s = "<div id=\"environment\">";
  for (const auto& w : e.warnings)
    s += "<div class=\"warning\"><strong>warning:</strong> " + escape(w) + "</div>";
  s += "<ul><li>CPU: " + escape(e.cpu_model) + " (" + std::to_string(e.logical_cpus) +
       " logical CPUs); flags: " + escape(flags.empty() ? "-" : flags) + "</li>";
  s += "<li>affinity: " + escape(e.affinity) + " (" + std::to_string(e.affinity_count) +
       " CPUs); cgroup CPU quota: " + escape(e.cgroup_cpu_quota) + "</li>";
  s += "<li>governor: " + escape(e.governor) +
       "; clock: " + (e.cur_mhz < 0 ? "unknown" : num(e.cur_mhz, 4) + " MHz") + " now, max " +
       (e.max_mhz < 0 ? "unknown" : num(e.max_mhz, 4) + " MHz") + "</li>";
  s += "<li>memory: " + (e.mem_total_mb < 0 ? "unknown" : num(e.mem_total_mb, 6) + " MiB") +
       "; load average: " + escape(e.loadavg) + "</li>";
  s += "<li>" + escape(e.kernel) + "; " + escape(e.compiler) + "; " + escape(e.libc) + "</li>";
  return s + "</ul></div>\n";
}

std::string protocol_section(const BenchSettings& st) {
  std::string s = "<ul id=\"protocol\"><li>identical inputs for every framework (" +
                  escape(st.input_source) + ", seed " + std::to_string(st.seed) +
                  "), written once as .npy</li><li>per cell and framework: load, first "
                  "inference, " +
                  std::to_string(st.warmup) + " warmup runs; then ";
  switch (st.plan.mode) {
    case MeasureMode::kUntilStable:
      s += "windows of " + std::to_string(st.plan.window_iterations) +
           " runs until the p50 of the last " + std::to_string(st.plan.stability.windows) +
           " windows is within " + num(100 * st.plan.stability.tolerance, 3) +
           "% of their mean (at most " + std::to_string(st.plan.max_windows) + " windows)";
      break;
    case MeasureMode::kDuration:
      s += "windows of " + std::to_string(st.plan.window_iterations) + " runs until " +
           num(st.plan.duration_s, 3) + " s of measured time";
      break;
    case MeasureMode::kIterations:
      s += std::to_string(st.plan.iterations) + " timed runs in windows of " +
           std::to_string(st.plan.window_iterations);
      break;
  }
  s += "</li><li>frameworks interleaved window by window (A B A B) so machine drift hits all "
       "alike</li><li>output agreement against " +
       escape(st.reference.empty() ? "-" : st.reference) + "</li>";
  for (const auto& o : st.peer_options)
    s += "<li>adapter option: <code>" + escape(o) + "</code></li>";
  return s + "</ul>\n";
}

}  // namespace

std::string html_report(const BenchReport& r) {
  const html::FrameworkColors colors(r);
  std::string h =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Osprey benchmark report</title><style>" +
      std::string(kStyle) + "</style></head><body>\n";
  h += "<h1>Osprey benchmark report</h1>\n<p class=\"note\">Osprey " + escape(r.osprey_version) +
       ", started " + escape(r.started_at) + ", " + num(r.wall_s, 3) +
       " s. Latencies are per inference call in ms (a call processes a whole batch); throughput "
       "in items/s; x ref = p50 / the reference framework's p50 in the same cell.</p>\n";
  h += "<h2>Frameworks</h2>\n" + failures(r) + frameworks_section(r, colors);
  for (size_t mi = 0; mi < r.settings.models.size(); ++mi) {
    h += "<h2 class=\"model\">Model " + std::to_string(mi) + ": " + escape(r.settings.models[mi]) +
         "</h2>\n";
    for (const auto& g : html::model_plots(r, mi, colors)) {
      h += "<h3>" + escape(g.heading) + "</h3><p class=\"note\">" + escape(g.note) +
           "</p>\n<div class=\"plots\">\n";
      for (const auto& svg : g.svgs) h += svg + "\n";
      h += "</div>\n";
    }
    h += "<h3>Results</h3>\n" + results_table(r, mi, colors);
  }
  h += "<h2>Environment</h2>\n" + environment_section(r.environment);
  h += "<h2>Protocol</h2>\n" + protocol_section(r.settings);
  return h + "</body></html>\n";
}

Status write_html_report(const BenchReport& report, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return invalid_argument("cannot create report directory ", out_dir, ": ", ec.message());
  const std::string path = out_dir + "/report.html";
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << html_report(report);
  f.close();
  if (!f) return invalid_argument("cannot write ", path);
  return Status::Ok();
}

}  // namespace osprey::bench
