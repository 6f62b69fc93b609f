// Inline SVG charts for the HTML benchmark report: a line chart (latency CDF, throughput
// curves) and a grouped bar chart (p50/p99, RSS). Pure functions from plain data to SVG text:
// no scripts, no external resources. Values that are not finite are never drawn (the chart
// says how many were left out), and an empty or single-valued axis gets a padded range, so the
// output never holds "nan" or "inf".
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace osprey::bench::html {

// Text escaped for HTML/SVG element content and attribute values (& < > " ').
std::string escape(const std::string& text);

// A number for display: up to `significant` significant digits, no exponent for ordinary
// magnitudes, "-" when not finite.
std::string format_number(double v, int significant = 3);

// "Nice" tick values (1, 2, 2.5, 5 x 10^k steps) covering [lo, hi], about `target` of them.
// lo == hi, reversed or non-finite bounds get a padded range; never empty.
std::vector<double> nice_ticks(double lo, double hi, int target);

// Powers of ten (and 2x, 5x between them when there are few decades) covering [lo, hi], both
// > 0.
std::vector<double> log_ticks(double lo, double hi);

struct LineSeries {
  std::string name;                               // legend text
  std::string group;                              // data-framework attribute (the framework name)
  std::string color;                              // CSS colour
  std::string dash;                               // SVG stroke-dasharray, "" = solid
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  bool markers = false;                           // a dot per point
};

enum class XScale { kLinear, kLog };

struct LineChart {
  std::string id;  // element id of the <svg>
  std::string css_class;
  std::string title;
  std::string x_label, y_label;  // with units
  XScale x_scale = XScale::kLinear;
  bool y_from_zero = false;
  double y_min = 0, y_max = 0;  // fixed y range when y_max > y_min
  // Ticks at exactly these x values (e.g. the thread counts measured) when given and linear;
  // otherwise nice_ticks over the data.
  std::vector<double> x_ticks;
  std::vector<LineSeries> series;
  int width = 460, height = 300;
};

std::string render_line_chart(const LineChart& chart);

struct Bar {
  std::string group;  // data-framework attribute
  std::string color;
  double opacity = 1;
  double value = 0;     // not drawn (a visible "n/a" instead) when negative or not finite
  std::string tooltip;  // <title> text
};

struct BarGroup {
  std::string label;  // under the group
  std::vector<Bar> bars;
};

struct LegendEntry {
  std::string name;
  std::string color;
  double opacity = 1;
};

struct BarChart {
  std::string id;
  std::string css_class;
  std::string title;
  std::string y_label;
  std::vector<BarGroup> groups;
  std::vector<LegendEntry> legend;
  std::string note;  // a line under the legend, e.g. "solid = p50, pale = p99"
  int height = 320;
};

std::string render_bar_chart(const BarChart& chart);

}  // namespace osprey::bench::html
