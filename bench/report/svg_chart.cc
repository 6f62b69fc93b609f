#include "report/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace osprey::bench::html {
namespace {

constexpr int kLeft = 70, kRight = 18, kTop = 36;
constexpr double kCharWidth = 6.6;  // average width of a 11px sans-serif character

// An SVG coordinate. Callers only pass finite values; a non-finite one would be a bug here,
// and is written as 0 so the document stays valid.
std::string c(double v) {
  if (!std::isfinite(v)) v = 0;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// Tick label: as many decimals as the tick step needs.
std::string tick_label(double v, double step) {
  int decimals = 0;
  double scaled = std::fabs(step);
  while (decimals < 8 && std::fabs(scaled - std::round(scaled)) > 1e-6 * std::max(1.0, scaled)) {
    scaled *= 10;
    ++decimals;
  }
  if (std::fabs(v) >= 1e7 || (v != 0 && std::fabs(v) < 1e-6)) return format_number(v, 3);
  if (std::fabs(v) < 0.5 * std::pow(10.0, -decimals)) v = 0;  // no "-0"
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string text(double x, double y, const std::string& s, const std::string& attrs) {
  return "<text x=\"" + c(x) + "\" y=\"" + c(y) + "\" " + attrs + ">" + escape(s) + "</text>";
}

// Characters in the longest line of a possibly multi-line label.
double longest_line(const std::string& label) {
  size_t best = 0, start = 0;
  while (start <= label.size()) {
    size_t end = label.find('\n', start);
    if (end == std::string::npos) end = label.size();
    best = std::max(best, end - start);
    start = end + 1;
  }
  return static_cast<double>(best);
}

struct Legend {
  std::string svg;
  int height = 0;
};

// Entries in rows that fit `width`, starting at y = `top`.
Legend legend(const std::vector<LegendEntry>& entries, const std::vector<std::string>& dashes,
              double left, double top, double width) {
  Legend out;
  if (entries.empty()) return out;
  double x = left, y = top;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LegendEntry& e = entries[i];
    const double w = 30 + kCharWidth * static_cast<double>(e.name.size()) + 16;
    if (x > left && x + w > left + width) {
      x = left;
      y += 18;
    }
    const std::string dash = i < dashes.size() ? dashes[i] : "";
    if (!dash.empty() || i < dashes.size()) {
      out.svg += "<line x1=\"" + c(x) + "\" y1=\"" + c(y - 4) + "\" x2=\"" + c(x + 24) +
                 "\" y2=\"" + c(y - 4) + "\" stroke=\"" + escape(e.color) +
                 "\" stroke-width=\"2.5\"" +
                 (dash.empty() ? "" : " stroke-dasharray=\"" + escape(dash) + "\"") + "/>";
    } else {
      out.svg += "<rect x=\"" + c(x + 6) + "\" y=\"" + c(y - 11) +
                 "\" width=\"12\" height=\"12\" fill=\"" + escape(e.color) + "\" fill-opacity=\"" +
                 c(e.opacity) + "\" stroke=\"" + escape(e.color) + "\"/>";
    }
    out.svg += text(x + 30, y, e.name, "class=\"legend\"");
    x += w;
  }
  out.height = static_cast<int>(y - top) + 20;
  return out;
}

struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
  bool log = false;
  double map(double v, double a, double b) const {  // data -> pixel in [a, b]
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (v - lo) / (hi - lo);
    return a + t * (b - a);
  }
};

Axis linear_axis(double lo, double hi, int target) {
  Axis a;
  a.ticks = nice_ticks(lo, hi, target);
  a.lo = a.ticks.front();
  a.hi = a.ticks.back();
  return a;
}

Axis log_axis(double lo, double hi) {
  Axis a;
  a.log = true;
  a.ticks = log_ticks(lo, hi);
  a.lo = std::pow(10.0, std::floor(std::log10(lo)));
  a.hi = std::pow(10.0, std::ceil(std::log10(hi)));
  if (a.hi <= a.lo) a.hi = a.lo * 10;
  return a;
}

std::string svg_open(const std::string& id, const std::string& cls, int w, int h,
                     const std::string& title) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"" + escape(id) + "\" class=\"plot " +
         escape(cls) + "\" width=\"" + std::to_string(w) + "\" height=\"" + std::to_string(h) +
         "\" viewBox=\"0 0 " + std::to_string(w) + " " + std::to_string(h) + "\" role=\"img\">" +
         "<title>" + escape(title) + "</title><rect class=\"bg\" x=\"0\" y=\"0\" width=\"" +
         std::to_string(w) + "\" height=\"" + std::to_string(h) + "\" fill=\"#ffffff\"/>" +
         text(w / 2.0, 20, title, "class=\"chart-title\" text-anchor=\"middle\"");
}

// Horizontal grid lines and y tick labels for the plot area [x0, x1] x [y0 (top), y1].
std::string y_grid(const Axis& y, double x0, double x1, double y0, double y1) {
  std::string s;
  const double step = y.ticks.size() > 1 ? y.ticks[1] - y.ticks[0] : 1;
  for (double t : y.ticks) {
    const double py = y.map(t, y1, y0);
    s += "<line class=\"grid\" x1=\"" + c(x0) + "\" y1=\"" + c(py) + "\" x2=\"" + c(x1) +
         "\" y2=\"" + c(py) + "\" stroke=\"#e3e3e3\"/>";
    s += "<line x1=\"" + c(x0 - 4) + "\" y1=\"" + c(py) + "\" x2=\"" + c(x0) + "\" y2=\"" + c(py) +
         "\" stroke=\"#333\"/>";
    s += text(x0 - 7, py + 4, tick_label(t, step), "class=\"tick\" text-anchor=\"end\"");
  }
  return s;
}

std::string axes_lines(double x0, double x1, double y0, double y1) {
  return "<path class=\"axes\" d=\"M" + c(x0) + " " + c(y0) + " V" + c(y1) + " H" + c(x1) +
         "\" fill=\"none\" stroke=\"#333\"/>";
}

std::string y_label(const std::string& label, double y0, double y1) {
  const double cy = (y0 + y1) / 2;
  return "<text class=\"axis-label\" text-anchor=\"middle\" transform=\"translate(16 " + c(cy) +
         ") rotate(-90)\">" + escape(label) + "</text>";
}

}  // namespace

std::string escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string format_number(double v, int significant) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3)) {
    std::snprintf(buf, sizeof buf, "%.*e", std::max(0, significant - 1), v);
    return buf;
  }
  const int magnitude = a == 0 ? 0 : static_cast<int>(std::floor(std::log10(a)));
  const int decimals = std::clamp(significant - 1 - magnitude, 0, 6);
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (lo > hi) std::swap(lo, hi);
  if (hi - lo <= 1e-12 * std::max(1.0, std::fabs(hi))) {
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  if (!std::isfinite(hi - lo)) lo = -1e300, hi = 1e300;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  const double start = std::floor(lo / step) * step;
  std::vector<double> ticks;
  for (int i = 0; i < 1000; ++i) {
    double v = start + i * step;
    if (std::fabs(v) < step * 1e-9) v = 0;
    ticks.push_back(v);
    if (v >= hi - step * 1e-9) break;
  }
  if (ticks.size() < 2) ticks.push_back(ticks.back() + step);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0) || !std::isfinite(lo)) lo = 1;
  if (!(hi > lo) || !std::isfinite(hi)) hi = lo * 10;
  const int e0 = static_cast<int>(std::floor(std::log10(lo)));
  const int e1 = std::max(e0 + 1, static_cast<int>(std::ceil(std::log10(hi))));
  std::vector<double> ticks;
  for (int e = e0; e <= e1 && e - e0 < 60; ++e) {
    const double p = std::pow(10.0, e);
    ticks.push_back(p);
    if (e1 - e0 <= 2 && e < e1) {
      ticks.push_back(2 * p);
      ticks.push_back(5 * p);
    }
  }
  return ticks;
}

std::string render_line_chart(const LineChart& ch) {
  // Drawable points: finite, and x > 0 on a log axis.
  const bool log_x = ch.x_scale == XScale::kLog;
  std::vector<std::vector<std::pair<double, double>>> pts(ch.series.size());
  size_t dropped = 0;
  double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
  for (size_t i = 0; i < ch.series.size(); ++i)
    for (const auto& [x, y] : ch.series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y) || (log_x && x <= 0)) {
        ++dropped;
        continue;
      }
      pts[i].emplace_back(x, y);
      xmin = std::min(xmin, x), xmax = std::max(xmax, x);
      ymin = std::min(ymin, y), ymax = std::max(ymax, y);
    }
  const bool empty = !std::isfinite(xmin);
  if (empty) xmin = log_x ? 1 : 0, xmax = log_x ? 10 : 1, ymin = 0, ymax = 1;
  if (ch.y_max > ch.y_min) ymin = ch.y_min, ymax = ch.y_max;
  if (ch.y_from_zero) ymin = std::min(0.0, ymin), ymax = std::max(ymax, ymin > 0 ? ymin : 0.0);
  Axis xa = log_x ? log_axis(xmin, xmax) : linear_axis(xmin, xmax, 5);
  if (!log_x && !ch.x_ticks.empty()) {
    std::vector<double> t;
    for (double v : ch.x_ticks)
      if (std::isfinite(v)) t.push_back(v);
    std::sort(t.begin(), t.end());
    t.erase(std::unique(t.begin(), t.end()), t.end());
    if (!t.empty()) {
      xa.ticks = t;
      xa.lo = std::min(t.front(), xmin);
      xa.hi = std::max(t.back(), xmax);
      const double pad = xa.hi > xa.lo ? 0.04 * (xa.hi - xa.lo) : 1;
      xa.lo -= pad;
      xa.hi += pad;
    }
  }
  const Axis ya = linear_axis(ymin, ymax, 5);

  const double x0 = kLeft, x1 = ch.width - kRight, y0 = kTop, y1 = ch.height - 46;
  std::vector<LegendEntry> entries;
  std::vector<std::string> dashes;
  for (const auto& s : ch.series) {
    entries.push_back({s.name, s.color, 1});
    dashes.push_back(s.dash);
  }
  const Legend lg = legend(entries, dashes, x0, y1 + 62, x1 - x0);
  const int total_h = ch.height + lg.height + (dropped ? 18 : 0);

  std::string s = svg_open(ch.id, ch.css_class, ch.width, total_h, ch.title);
  s += y_grid(ya, x0, x1, y0, y1);
  double xstep = xa.ticks.size() > 1 ? xa.ticks[1] - xa.ticks[0] : 1;
  for (size_t i = 1; i < xa.ticks.size(); ++i)
    xstep = std::min(xstep, xa.ticks[i] - xa.ticks[i - 1]);
  double last_label = -1e9;
  for (double t : xa.ticks) {
    const double px = xa.map(t, x0, x1);
    s += "<line class=\"grid\" x1=\"" + c(px) + "\" y1=\"" + c(y0) + "\" x2=\"" + c(px) +
         "\" y2=\"" + c(y1) + "\" stroke=\"#eeeeee\"/>";
    s += "<line x1=\"" + c(px) + "\" y1=\"" + c(y1) + "\" x2=\"" + c(px) + "\" y2=\"" + c(y1 + 4) +
         "\" stroke=\"#333\"/>";
    if (px - last_label < 26) continue;  // labels too close to read: the tick stays
    last_label = px;
    s += text(px, y1 + 17, tick_label(t, log_x ? t : xstep),
              "class=\"tick\" text-anchor=\"middle\"");
  }
  s += axes_lines(x0, x1, y0, y1);
  s += text((x0 + x1) / 2, y1 + 38, ch.x_label, "class=\"axis-label\" text-anchor=\"middle\"");
  s += y_label(ch.y_label, y0, y1);
  if (empty)
    s += text((x0 + x1) / 2, (y0 + y1) / 2, "no data to plot",
              "class=\"no-data\" text-anchor=\"middle\"");
  for (size_t i = 0; i < ch.series.size(); ++i) {
    const LineSeries& se = ch.series[i];
    if (pts[i].empty()) continue;
    std::string d;
    for (const auto& [x, y] : pts[i])
      d += (d.empty() ? "M" : " L") + c(xa.map(x, x0, x1)) + " " + c(ya.map(y, y1, y0));
    s += "<g class=\"series\" data-framework=\"" + escape(se.group) + "\"><title>" +
         escape(se.name) + "</title>";
    s += "<path class=\"line\" d=\"" + d + "\" fill=\"none\" stroke=\"" + escape(se.color) +
         "\" stroke-width=\"2\"" +
         (se.dash.empty() ? "" : " stroke-dasharray=\"" + escape(se.dash) + "\"") + "/>";
    if (se.markers || pts[i].size() == 1)
      for (const auto& [x, y] : pts[i])
        s += "<circle cx=\"" + c(xa.map(x, x0, x1)) + "\" cy=\"" + c(ya.map(y, y1, y0)) +
             "\" r=\"3.5\" fill=\"" + escape(se.color) + "\"/>";
    s += "</g>";
  }
  s += lg.svg;
  if (dropped)
    s += text(x0, total_h - 6, std::to_string(dropped) + " point(s) not finite, not drawn",
              "class=\"chart-note\"");
  return s + "</svg>";
}

std::string render_bar_chart(const BarChart& ch) {
  constexpr double kBar = 16, kGap = 28;
  double ymax = 0;
  for (const auto& g : ch.groups)
    for (const auto& b : g.bars)
      if (std::isfinite(b.value) && b.value > ymax) ymax = b.value;
  const Axis ya = linear_axis(0, ymax > 0 ? ymax : 1, 5);

  size_t label_lines = 1;
  double plot_w = 0;
  for (const auto& g : ch.groups) {
    plot_w += std::max(kBar * static_cast<double>(g.bars.size()),
                       kCharWidth * longest_line(g.label) + 4) +
              kGap;
    label_lines = std::max(
        label_lines, 1 + static_cast<size_t>(std::count(g.label.begin(), g.label.end(), '\n')));
  }
  const int width = static_cast<int>(kLeft + std::max(320.0, plot_w) + kRight);
  const double x0 = kLeft, x1 = width - kRight, y0 = kTop, y1 = ch.height - 20.0 - 14 * label_lines;
  const Legend lg = legend(ch.legend, {}, x0, ch.height + 8.0, x1 - x0);
  const int total_h = ch.height + lg.height + (ch.note.empty() ? 0 : 18) + 6;

  std::string s = svg_open(ch.id, ch.css_class, width, total_h, ch.title);
  s += y_grid(ya, x0, x1, y0, y1);
  s += y_label(ch.y_label, y0, y1);
  if (ch.groups.empty())
    s += text((x0 + x1) / 2, (y0 + y1) / 2, "no data to plot",
              "class=\"no-data\" text-anchor=\"middle\"");
  const double scale = (x1 - x0) / std::max(1.0, plot_w);
  double gx = x0;
  for (const auto& g : ch.groups) {
    const double gw = (std::max(kBar * static_cast<double>(g.bars.size()),
                                kCharWidth * longest_line(g.label) + 4) +
                       kGap) *
                      scale;
    const double bars_w = kBar * static_cast<double>(g.bars.size());
    double bx = gx + (gw - bars_w) / 2;
    for (const auto& b : g.bars) {
      const bool drawable = std::isfinite(b.value) && b.value >= 0;
      s += "<g class=\"bar\" data-framework=\"" + escape(b.group) + "\"><title>" +
           escape(b.tooltip) + "</title>";
      if (drawable) {
        const double top = ya.map(b.value, y1, y0);
        s += "<rect x=\"" + c(bx + 1) + "\" y=\"" + c(top) + "\" width=\"" + c(kBar - 2) +
             "\" height=\"" + c(std::max(0.0, y1 - top)) + "\" fill=\"" + escape(b.color) +
             "\" fill-opacity=\"" + c(b.opacity) + "\" stroke=\"" + escape(b.color) + "\"/>";
      } else {
        s += "<text class=\"na\" transform=\"translate(" + c(bx + kBar / 2 + 3) + " " + c(y1 - 4) +
             ") rotate(-90)\" fill=\"" + escape(b.color) + "\">n/a</text>";
      }
      s += "</g>";
      bx += kBar;
    }
    double ly = y1 + 16;
    size_t start = 0;
    while (start <= g.label.size()) {
      size_t end = g.label.find('\n', start);
      if (end == std::string::npos) end = g.label.size();
      s += text(gx + gw / 2, ly, g.label.substr(start, end - start),
                "class=\"tick\" text-anchor=\"middle\"");
      ly += 14;
      start = end + 1;
    }
    gx += gw;
  }
  s += axes_lines(x0, x1, y0, y1);
  s += lg.svg;
  if (!ch.note.empty())
    s += text(x0, ch.height + lg.height + 14.0, ch.note, "class=\"chart-note\"");
  return s + "</svg>";
}

}  // namespace osprey::bench::html
