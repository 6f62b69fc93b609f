#include "report/report_plots.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>

#include "report/svg_chart.h"

namespace osprey::bench::html {
namespace {

constexpr double kPale = 0.35;
constexpr size_t kCdfPoints = 201;
const char* const kDashes[] = {"", "7 4", "2 3", "10 3 2 3", "4 4"};

double mib(int64_t bytes) {
  return bytes < 0 ? -1 : static_cast<double>(bytes) / (1 << 20);
}

bool swept(const std::vector<std::string>& v) {
  return v.size() > 1;
}

// The cells of one model, in report order.
std::vector<size_t> model_cells(const BenchReport& r, size_t mi) {
  std::vector<size_t> out;
  for (size_t i = 0; i < r.cells.size(); ++i)
    if (mi < r.settings.models.size() && r.cells[i].model == r.settings.models[mi])
      out.push_back(i);
  return out;
}

const Measurement* find(const BenchReport& r, size_t cell, const std::string& fw) {
  for (const auto& m : r.measurements)
    if (m.cell == cell && m.framework == fw) return &m;
  return nullptr;
}

bool ok(const Measurement* m) {
  return m && m->status == CellStatus::kOk && m->summary.count > 0;
}

std::string cdf_chart(const BenchReport& r, size_t ci, const FrameworkColors& colors) {
  const Cell& cell = r.cells[ci];
  LineChart ch;
  ch.id = "cdf-" + cell.id;
  ch.css_class = "plot-cdf";
  ch.title = "Latency CDF: " + cell_label(r, cell, ", ");
  ch.x_label = "latency per call (ms)";
  ch.y_label = "runs at or below (%)";
  ch.y_min = 0;
  ch.y_max = 100;
  double lo = INFINITY, hi = 0;
  for (const auto& fw : colors.order()) {
    const Measurement* m = find(r, ci, fw);
    if (!ok(m) || m->latencies_ms.empty()) continue;
    const std::vector<double> q = cdf_points(
        m->latencies_ms, std::min(kCdfPoints, std::max<size_t>(2, m->latencies_ms.size())));
    LineSeries s;
    s.name = fw;
    s.group = fw;
    s.color = colors.color(fw);
    for (size_t i = 0; i < q.size(); ++i) {
      s.points.emplace_back(q[i],
                            100.0 * static_cast<double>(i) / static_cast<double>(q.size() - 1));
      if (std::isfinite(q[i]) && q[i] > 0) lo = std::min(lo, q[i]), hi = std::max(hi, q[i]);
    }
    ch.series.push_back(std::move(s));
  }
  // Frameworks far apart (or long tails) are readable only on a log axis.
  if (std::isfinite(lo) && hi / lo > 30) {
    ch.x_scale = XScale::kLog;
    ch.x_label = "latency per call (ms, log scale)";
  }
  return render_line_chart(ch);
}

std::vector<LegendEntry> framework_legend(const FrameworkColors& colors) {
  std::vector<LegendEntry> out;
  for (const auto& fw : colors.order()) out.push_back({fw, colors.color(fw), 1});
  return out;
}

// Two bars per framework per cell: `first` solid, `second` pale.
BarChart paired_bars(const BenchReport& r, const std::vector<size_t>& cells,
                     const FrameworkColors& colors, const char* first_name, const char* second_name,
                     double (*first)(const Measurement&), double (*second)(const Measurement&),
                     const char* unit) {
  BarChart ch;
  for (size_t ci : cells) {
    BarGroup g;
    g.label = cell_label(r, r.cells[ci], "\n");
    for (const auto& fw : colors.order()) {
      const Measurement* m = find(r, ci, fw);
      const double a = m ? first(*m) : -1, b = m ? second(*m) : -1;
      const std::string why =
          m && m->status != CellStatus::kOk ? std::string(": ") + cell_status_name(m->status) : "";
      g.bars.push_back(
          {fw, colors.color(fw), 1, a,
           fw + " " + first_name + " " + (a < 0 ? "n/a" + why : format_number(a, 4) + " " + unit)});
      g.bars.push_back({fw, colors.color(fw), kPale, b,
                        fw + " " + second_name + " " +
                            (b < 0 ? "n/a" + why : format_number(b, 4) + " " + unit)});
    }
    ch.groups.push_back(std::move(g));
  }
  ch.legend = framework_legend(colors);
  ch.note = std::string("solid = ") + first_name + ", pale = " + second_name +
            "; n/a = not measured (see the table)";
  return ch;
}

double p50(const Measurement& m) {
  return m.status == CellStatus::kOk && m.summary.count ? m.summary.p50 : -1;
}
double p99(const Measurement& m) {
  return m.status == CellStatus::kOk && m.summary.count ? m.summary.p99 : -1;
}
double peak_rss(const Measurement& m) {
  return mib(m.peak_rss_bytes);
}
double steady_rss(const Measurement& m) {
  return mib(m.rss_bytes);
}

// Throughput against one cell dimension (threads or batch): a chart per combination of the
// other swept dimensions except the curve one (`curve`: batch or threads), a line per
// framework and curve value.
enum class Along { kThreads, kBatch };

std::vector<std::string> throughput_charts(const BenchReport& r, size_t mi,
                                           const std::vector<size_t>& cells,
                                           const FrameworkColors& colors, Along along) {
  // Charts are keyed by (shape set, precision, shape mode, affinity); series by (framework, the
  // other dimension).
  using ChartKey = std::tuple<std::string, std::string, std::string, bool>;
  const auto key_of = [](const Cell& c) {
    return ChartKey{c.shape_label, c.precision, c.shape_mode, c.pinned};
  };
  std::vector<ChartKey> chart_keys;
  for (size_t ci : cells) {
    const ChartKey k = key_of(r.cells[ci]);
    if (std::find(chart_keys.begin(), chart_keys.end(), k) == chart_keys.end())
      chart_keys.push_back(k);
  }
  const bool by_threads = along == Along::kThreads;
  std::vector<std::string> out;
  for (size_t ki = 0; ki < chart_keys.size(); ++ki) {
    const auto& [shape, precision, shape_mode, pinned] = chart_keys[ki];
    std::vector<int64_t> others;  // batches (for a threads chart) or thread counts
    for (size_t ci : cells) {
      const Cell& c = r.cells[ci];
      if (key_of(c) != chart_keys[ki]) continue;
      const int64_t o = by_threads ? c.batch : c.threads;
      if (std::find(others.begin(), others.end(), o) == others.end()) others.push_back(o);
    }
    LineChart ch;
    ch.id = std::string(by_threads ? "throughput-threads-m" : "throughput-batch-m") +
            std::to_string(mi) + "-" + std::to_string(ki);
    ch.css_class = by_threads ? "plot-throughput-threads" : "plot-throughput-batch";
    ch.title = std::string("Throughput vs ") + (by_threads ? "threads" : "batch");
    if (swept(r.settings.shape_sets)) ch.title += ", " + shape;
    if (swept(r.settings.precisions)) ch.title += ", " + precision;
    if (swept(r.settings.shape_modes)) ch.title += ", " + shape_mode + " shapes";
    if (swept(r.settings.affinity)) ch.title += pinned ? ", pinned" : ", unpinned";
    ch.x_label = by_threads ? "threads" : "batch size (items per call)";
    ch.y_label = "throughput (items/s)";
    ch.y_from_zero = true;
    for (const auto& fw : colors.order())
      for (size_t oi = 0; oi < others.size(); ++oi) {
        LineSeries s;
        s.name = fw + (others.size() > 1
                           ? (by_threads ? ", batch " : ", threads ") + std::to_string(others[oi])
                           : "");
        s.group = fw;
        s.color = colors.color(fw);
        s.dash = kDashes[oi % std::size(kDashes)];
        s.markers = true;
        for (size_t ci : cells) {
          const Cell& c = r.cells[ci];
          if (key_of(c) != chart_keys[ki] || (by_threads ? c.batch : c.threads) != others[oi])
            continue;
          const Measurement* m = find(r, ci, fw);
          if (ok(m))
            s.points.emplace_back(static_cast<double>(by_threads ? c.threads : c.batch),
                                  m->throughput);
        }
        std::sort(s.points.begin(), s.points.end());
        for (const auto& p : s.points) ch.x_ticks.push_back(p.first);
        if (!s.points.empty()) ch.series.push_back(std::move(s));
      }
    out.push_back(render_line_chart(ch));
  }
  return out;
}

}  // namespace

std::string palette_color(size_t i) {
  // Okabe-Ito, without its black and yellow (too dark / too light on white).
  static const char* const kColors[] = {"#0072b2", "#e69f00", "#009e73", "#d55e00",
                                        "#cc79a7", "#56b4e9", "#8c564b", "#7f7f7f"};
  if (i < std::size(kColors)) return kColors[i];
  char buf[48];
  std::snprintf(buf, sizeof buf, "hsl(%d, 60%%, 42%%)", static_cast<int>((i * 137) % 360));
  return buf;
}

FrameworkColors::FrameworkColors(const BenchReport& r) {
  auto add = [this](const std::string& name) {
    if (colors_.count(name)) return;
    colors_[name] = palette_color(order_.size());
    order_.push_back(name);
  };
  for (const auto& f : r.settings.frameworks) add(f);
  for (const auto& f : r.frameworks) add(f.name);
  for (const auto& m : r.measurements) add(m.framework);
}

const std::string& FrameworkColors::color(const std::string& framework) const {
  static const std::string kUnknown = "#000000";
  auto it = colors_.find(framework);
  return it == colors_.end() ? kUnknown : it->second;
}

std::string cell_label(const BenchReport& r, const Cell& c, const std::string& sep) {
  std::string s = "batch " + std::to_string(c.batch) + ", threads " + std::to_string(c.threads);
  if (swept(r.settings.precisions)) s += ", " + c.precision;
  if (swept(r.settings.shape_modes) || c.shape_mode != "dynamic")
    s += ", " + c.shape_mode + " shapes";
  if (swept(r.settings.affinity) || c.pinned) s += c.pinned ? ", pinned" : ", unpinned";
  if (swept(r.settings.shape_sets)) s += sep + c.shape_label;
  return s;
}

std::vector<PlotGroup> model_plots(const BenchReport& r, size_t mi, const FrameworkColors& colors) {
  const std::vector<size_t> cells = model_cells(r, mi);
  std::vector<PlotGroup> out;

  PlotGroup cdf{"Latency CDF", "Share of timed runs at or below each latency, per cell.", {}};
  for (size_t ci : cells) cdf.svgs.push_back(cdf_chart(r, ci, colors));
  out.push_back(std::move(cdf));

  BarChart lat = paired_bars(r, cells, colors, "p50", "p99", p50, p99, "ms");
  lat.id = "latency-bars-m" + std::to_string(mi);
  lat.css_class = "plot-latency-bars";
  lat.title = "p50 and p99 latency per framework and cell";
  lat.y_label = "latency per call (ms)";
  out.push_back({"p50 and p99 latency", "Lower is better.", {render_bar_chart(lat)}});

  out.push_back({"Throughput vs threads",
                 "Items per second of summed latency (one stream); higher is better.",
                 throughput_charts(r, mi, cells, colors, Along::kThreads)});
  out.push_back({"Throughput vs batch", "Items per second; a batch of n counts n items.",
                 throughput_charts(r, mi, cells, colors, Along::kBatch)});

  BarChart mem = paired_bars(r, cells, colors, "peak RSS", "RSS after the last window", peak_rss,
                             steady_rss, "MiB");
  mem.id = "rss-bars-m" + std::to_string(mi);
  mem.css_class = "plot-rss-bars";
  mem.title = "Memory: peak and steady resident set size";
  mem.y_label = "resident memory (MiB)";
  out.push_back({"Memory",
                 "Osprey runs inside the benchmark process (its figures include the "
                 "orchestrator); a peer's include its Python interpreter.",
                 {render_bar_chart(mem)}});
  return out;
}

}  // namespace osprey::bench::html
