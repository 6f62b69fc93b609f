// The plots of the HTML benchmark report, drawn from a BenchReport as inline SVG: per model a
// latency CDF per cell, p50/p99 bars per framework per cell, throughput against threads and
// against batch (a line per framework), and peak/steady RSS bars. Each framework keeps one
// colour in every plot (FrameworkColors).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/report.h"

namespace osprey::bench::html {

// The i-th colour of the report palette (colour-blind friendly for the first 8; further ones
// are spread around the hue circle).
std::string palette_color(size_t index);

// Framework name -> colour, in the order the run listed the frameworks (then any other name
// found in the measurements).
class FrameworkColors {
 public:
  explicit FrameworkColors(const BenchReport& report);
  const std::string& color(const std::string& framework) const;
  const std::vector<std::string>& order() const { return order_; }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::string> colors_;
};

// "batch 2, threads 4" plus the precision and shape set when the run swept those, and the shape
// mode ("fixed shapes") and affinity ("pinned" / "unpinned") when swept or not the default;
// the shape set goes on a line of its own, joined by `separator`.
std::string cell_label(const BenchReport& report, const Cell& cell, const std::string& separator);

struct PlotGroup {
  std::string heading;
  std::string note;               // how to read it
  std::vector<std::string> svgs;  // each a complete <svg> element
};

// The plots of one model (index into report.settings.models), in display order.
std::vector<PlotGroup> model_plots(const BenchReport& report, size_t model_index,
                                   const FrameworkColors& colors);

}  // namespace osprey::bench::html
