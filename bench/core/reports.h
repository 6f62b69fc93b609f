// The report files of a benchmark run, all from one BenchReport:
//   results.csv  one row per measurement (cell x framework), header first (csv_columns())
//   results.json everything: settings, environment, frameworks, cells, and per measurement the
//                summary, every latency (or, above kMaxRawLatencies, a 1001-point CDF),
//                per-window p50s, RSS, settings and output agreement
//   summary.md   a Markdown table per model plus environment, settings and failures
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/report.h"
#include "osprey/status.h"

namespace osprey::bench {

inline constexpr size_t kMaxRawLatencies = 20000;

std::vector<std::string> csv_columns();
std::string csv_report(const BenchReport& report);
std::string json_report(const BenchReport& report);
std::string markdown_report(const BenchReport& report);

// Writes results.csv, results.json and summary.md into `out_dir` (created if missing).
Status write_reports(const BenchReport& report, const std::string& out_dir);

// Output agreement of one measurement over its compared outputs: the largest max abs / max rel
// error, the lowest cosine, the lowest top-1 agreement (-1 when no output is a classifier), and
// "output: why" notes (joined with "; ") for the outputs that could not be compared.
struct AgreementSummary {
  int compared = 0;
  double max_abs = 0, max_rel = 0, cosine = 1, top1 = -1;
  std::string notes;
};
AgreementSummary summarize_agreement(const Measurement& m);

// The measurement's p50 divided by the reference framework's p50 in the same cell; -1 when
// either is missing.
double ratio_to_reference(const BenchReport& report, const Measurement& m);

}  // namespace osprey::bench
