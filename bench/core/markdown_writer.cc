#include <cmath>
#include <cstdio>
#include <set>

#include "core/reports.h"

namespace osprey::bench {
namespace {

std::string f(double v, int digits = 3) {
  if (!std::isfinite(v)) return std::isinf(v) ? "inf" : "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string g(double v) {
  if (!std::isfinite(v)) return std::isinf(v) ? "inf" : "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2g", v);
  return buf;
}

// Markdown table cells may not hold '|' or newlines.
std::string cell_text(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string agreement_text(const Measurement& m) {
  if (m.agreement_reference.empty()) return m.agreement_note.empty() ? "-" : m.agreement_note;
  const AgreementSummary agree = summarize_agreement(m);
  const double max_abs = std::max(0.0, agree.max_abs), cos = std::min(1.0, agree.cosine);
  const double top1 = agree.top1;
  const std::string& notes = agree.notes;
  std::string s;
  if (agree.compared > 0) {
    s = "max abs " + g(max_abs) + ", cos " + f(cos, 6);
    if (top1 >= 0) s += ", top-1 " + f(100 * top1, 0) + "%";
    s += " vs " + m.agreement_reference;
  }
  if (!notes.empty()) s += (s.empty() ? "" : "; ") + notes;
  return s;
}

}  // namespace

std::string markdown_report(const BenchReport& r) {
  const BenchSettings& st = r.settings;
  std::string md = "# Benchmark\n\n";
  md += "Osprey " + r.osprey_version + ", started " + r.started_at + ", " + f(r.wall_s, 1) + " s. ";
  md +=
      "Latencies in ms per inference call (batch items per call); throughput in items/s; x ref = "
      "p50 / " +
      st.reference + "'s p50 in the same cell.\n\n";
  for (size_t mi = 0; mi < st.models.size(); ++mi) {
    md += "## " + st.models[mi] + "\n\n";
    md +=
        "| shapes | batch | shape mode | threads | affinity | precision | framework | p50 | p90 | "
        "p99 | max | mean ± stdev "
        "| items/s | "
        "x ref | load ms | first ms | peak RSS MiB | stable | output agreement | status |\n";
    md += "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
    for (const auto& m : r.measurements) {
      const Cell& c = r.cells[m.cell];
      if (c.model != st.models[mi]) continue;
      const bool ok = m.status == CellStatus::kOk;
      const Summary& s = m.summary;
      const double ratio = ratio_to_reference(r, m);
      md += "| " + cell_text(c.shape_label) + " | " + std::to_string(c.batch) + " | " +
            c.shape_mode + " | " + std::to_string(c.threads) + " | " + (c.pinned ? "on" : "off") +
            " | " + c.precision + " | " + m.framework + " | ";
      if (ok) {
        md += f(s.p50) + " | " + f(s.p90) + " | " + f(s.p99) + " | " + f(s.max) + " | " +
              f(s.mean) + " ± " + f(s.stdev) + " | " + f(m.throughput, 1) + " | " +
              (ratio < 0 ? "-" : f(ratio, 2) + "x") + " | ";
      } else {
        md += "- | - | - | - | - | - | - | ";
      }
      md += (m.load_ms < 0 ? "-" : f(m.load_ms, 1)) + " | " +
            (m.first_inference_ms < 0 ? "-" : f(m.first_inference_ms)) + " | " +
            (m.peak_rss_bytes < 0 ? "-" : f(static_cast<double>(m.peak_rss_bytes) / (1 << 20), 1)) +
            " | " + (ok ? (m.stable ? "yes" : "no") : "-") + " | " + cell_text(agreement_text(m)) +
            " | " +
            cell_text(ok ? "ok" : std::string(cell_status_name(m.status)) + ": " + m.reason) +
            " |\n";
    }
    md += "\n";
  }

  md +=
      "## Frameworks\n\n| framework | version | available | how it runs | thread pinning |\n"
      "|---|---|---|---|---|\n";
  for (const auto& fw : r.frameworks)
    md += "| " + fw.name + " | " + cell_text(fw.version.empty() ? "-" : fw.version) + " | " +
          (fw.available ? "yes" : cell_text("no: " + fw.reason)) + " | " +
          (fw.in_process ? "in the benchmark process" : "own process, through its adapter") +
          " | " + cell_text((fw.pins_threads ? "yes: " : "no: ") + fw.pin_threads_note) + " |\n";
  md += "\nSettings each framework chose (as it reported them; first cell where it loaded):\n\n";
  std::set<std::string> shown;
  for (const auto& m : r.measurements) {
    if (m.status == CellStatus::kUnavailable || m.status == CellStatus::kLoadFailed ||
        shown.count(m.framework))
      continue;
    shown.insert(m.framework);
    md += "- **" + m.framework + "**: `" + m.settings_json + "`, precision used " +
          (m.precision_used.empty() ? "-" : m.precision_used) +
          (m.notes.empty() ? "" : "; " + m.notes) + "\n";
  }

  const Environment& e = r.environment;
  md += "\n## Environment\n\n";
  md += "- CPU: " + e.cpu_model + " (" + std::to_string(e.logical_cpus) + " logical CPUs); flags:";
  for (const auto& fl : e.cpu_flags) md += " " + fl;
  md += "\n- affinity: " + e.affinity + " (" + std::to_string(e.affinity_count) +
        " CPUs); cgroup CPU quota: " + e.cgroup_cpu_quota + "\n";
  md += "- governor: " + e.governor +
        "; clock: " + (e.cur_mhz < 0 ? "unknown" : f(e.cur_mhz, 0) + " MHz") + " now, max " +
        (e.max_mhz < 0 ? "unknown" : f(e.max_mhz, 0) + " MHz") + "\n";
  md += "- memory: " + (e.mem_total_mb < 0 ? "unknown" : f(e.mem_total_mb, 0) + " MiB") +
        "; load average: " + e.loadavg + "\n";
  md += "- " + e.kernel + "; " + e.compiler + "; " + e.libc + "\n";
  for (const auto& w : e.warnings) md += "- **warning**: " + w + "\n";

  md += "\n## Protocol\n\n";
  md += "- identical inputs for every framework (" + st.input_source + ", seed " +
        std::to_string(st.seed) + "), written once as .npy\n";
  md += "- per cell and framework: load, first inference, " + std::to_string(st.warmup) +
        " warmup runs; then ";
  switch (st.plan.mode) {
    case MeasureMode::kUntilStable:
      md += "windows of " + std::to_string(st.plan.window_iterations) +
            " runs until the p50 of the last " + std::to_string(st.plan.stability.windows) +
            " windows is within " + f(100 * st.plan.stability.tolerance, 1) +
            "% of their mean (at most " + std::to_string(st.plan.max_windows) + " windows)\n";
      break;
    case MeasureMode::kDuration:
      md += "windows of " + std::to_string(st.plan.window_iterations) + " runs until " +
            f(st.plan.duration_s, 2) + " s of measured time\n";
      break;
    case MeasureMode::kIterations:
      md += std::to_string(st.plan.iterations) + " timed runs in windows of " +
            std::to_string(st.plan.window_iterations) + "\n";
      break;
  }
  md += "- frameworks interleaved window by window (A B A B) so machine drift hits all alike\n";
  for (const auto& o : st.peer_options) md += "- adapter option: `" + o + "`\n";
  return md;
}

}  // namespace osprey::bench
