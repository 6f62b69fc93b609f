// report.html: the benchmark report as one self-contained, offline HTML file (inline CSS and
// inline SVG plots; no scripts, no fonts, no network). It holds, from the same BenchReport the
// JSON writer reads: the frameworks that could not run and why, per model the plots
// (report_plots.h) and a table of results, each framework's settings, the environment with its
// warnings highlighted, and the protocol. All text from the run is HTML-escaped.
#pragma once

#include <string>

#include "core/report.h"
#include "osprey/status.h"

namespace osprey::bench {

std::string html_report(const BenchReport& report);

// Writes `out_dir`/report.html (the directory is created if missing).
Status write_html_report(const BenchReport& report, const std::string& out_dir);

}  // namespace osprey::bench
