#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/reports.h"

namespace osprey::bench {
namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  if (!std::isfinite(v)) return std::isinf(v) ? "inf" : "";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string opt_num(double v) {
  return v < 0 ? "" : num(v);
}

}  // namespace

AgreementSummary summarize_agreement(const Measurement& m) {
  AgreementSummary s;
  for (const auto& a : m.agreement) {
    if (!a.compared) {
      s.notes += (s.notes.empty() ? "" : "; ") + a.output + ": " + a.note;
      continue;
    }
    s.max_abs = s.compared ? std::max(s.max_abs, a.max_abs) : a.max_abs;
    s.max_rel = s.compared ? std::max(s.max_rel, a.max_rel) : a.max_rel;
    s.cosine = s.compared ? std::min(s.cosine, a.cosine) : a.cosine;
    if (a.top1_agreement >= 0) s.top1 = s.top1 < 0 ? a.top1_agreement : std::min(s.top1, a.top1_agreement);
    ++s.compared;
  }
  return s;
}

double ratio_to_reference(const BenchReport& report, const Measurement& m) {
  if (m.status != CellStatus::kOk || m.summary.count == 0) return -1;
  for (const auto& o : report.measurements)
    if (o.cell == m.cell && o.framework == report.settings.reference &&
        o.status == CellStatus::kOk && o.summary.count > 0 && o.summary.p50 > 0)
      return m.summary.p50 / o.summary.p50;
  return -1;
}

std::vector<std::string> csv_columns() {
  return {"model",
          "shapes",
          "batch",
          "shape_mode",
          "threads",
          "affinity",
          "precision",
          "framework",
          "version",
          "status",
          "reason",
          "precision_used",
          "load_ms",
          "first_inference_ms",
          "iterations",
          "windows",
          "stable",
          "p50_ms",
          "p90_ms",
          "p95_ms",
          "p99_ms",
          "max_ms",
          "min_ms",
          "mean_ms",
          "stdev_ms",
          "throughput_items_per_s",
          "p50_ratio_to_reference",
          "rss_mb",
          "peak_rss_mb",
          "agreement_reference",
          "max_abs_err",
          "max_rel_err",
          "min_cosine",
          "top1_agreement"};
}

std::string csv_report(const BenchReport& report) {
  std::string out;
  const auto cols = csv_columns();
  for (size_t i = 0; i < cols.size(); ++i) {
    if (i) out += ',';
    out += cols[i];
  }
  out += "\n";
  for (const auto& m : report.measurements) {
    const Cell& c = report.cells[m.cell];
    std::string version;
    for (const auto& f : report.frameworks)
      if (f.name == m.framework) version = f.version;
    const bool ok = m.status == CellStatus::kOk;
    const AgreementSummary agree = summarize_agreement(m);
    const bool compared = agree.compared > 0;
    const Summary& s = m.summary;
    std::vector<std::string> row = {
        c.model,
        c.shape_label,
        std::to_string(c.batch),
        c.shape_mode,
        std::to_string(c.threads),
        c.pinned ? "on" : "off",
        c.precision,
        m.framework,
        version,
        cell_status_name(m.status),
        m.reason,
        m.precision_used,
        opt_num(m.load_ms),
        opt_num(m.first_inference_ms),
        ok ? std::to_string(s.count) : "",
        ok ? std::to_string(m.window_p50_ms.size()) : "",
        ok ? (m.stable ? "true" : "false") : "",
        ok ? num(s.p50) : "",
        ok ? num(s.p90) : "",
        ok ? num(s.p95) : "",
        ok ? num(s.p99) : "",
        ok ? num(s.max) : "",
        ok ? num(s.min) : "",
        ok ? num(s.mean) : "",
        ok ? num(s.stdev) : "",
        ok ? num(m.throughput) : "",
        opt_num(ratio_to_reference(report, m)),
        m.rss_bytes < 0 ? "" : num(static_cast<double>(m.rss_bytes) / (1 << 20)),
        m.peak_rss_bytes < 0 ? "" : num(static_cast<double>(m.peak_rss_bytes) / (1 << 20)),
        m.agreement_reference,
        compared ? opt_num(agree.max_abs) : "",
        compared ? opt_num(agree.max_rel) : "",
        compared ? num(agree.cosine) : "",
        agree.top1 < 0 ? "" : num(agree.top1)};
    for (size_t i = 0; i < row.size(); ++i) {
      if (i) out += ',';
      out += csv_field(row[i]);
    }
    out += "\n";
  }
  return out;
}

Status write_reports(const BenchReport& report, const std::string& out_dir) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return invalid_argument("cannot create --out directory ", out_dir, ": ", ec.message());
  const std::pair<const char*, std::string> files[] = {{"results.csv", csv_report(report)},
                                                       {"results.json", json_report(report)},
                                                       {"summary.md", markdown_report(report)}};
  for (const auto& [name, text] : files) {
    const std::string path = out_dir + "/" + name;
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    f.close();
    if (!f) return invalid_argument("cannot write ", path);
  }
  return Status::Ok();
}

}  // namespace osprey::bench
