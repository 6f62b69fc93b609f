#include "select/constraints.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace osprey::bench::select {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  return parts;
}

// A leading non-negative finite decimal number; `rest` gets what follows it.
bool leading_number(std::string_view s, double* value, std::string_view* rest) {
  s = trim(s);
  if (s.empty() || s.front() == '-' || s.front() == '+') return false;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), *value);
  if (r.ec != std::errc() || !std::isfinite(*value)) return false;
  *rest = trim(s.substr(static_cast<size_t>(r.ptr - s.data())));
  return true;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string format_ms(double ms) {
  if (ms < 0) return "n/a";
  if (ms < 0.01) return fmt("%.3g us", ms * 1000);
  if (ms >= 100) return fmt("%.0f ms", ms);
  if (ms >= 10) return fmt("%.1f ms", ms);
  if (ms >= 1) return fmt("%.2f ms", ms);
  return fmt("%.3f ms", ms);
}

std::string format_bytes(double bytes) {
  if (bytes < 0) return "n/a";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
  return fmt(u == 0 ? "%.0f" : "%.1f", bytes) + " " + units[u];
}

std::string format_rate(double per_s) {
  if (per_s < 0) return "n/a";
  return fmt(per_s >= 100 ? "%.0f/s" : per_s >= 10 ? "%.1f/s" : "%.2f/s", per_s);
}

Result<std::vector<LatencyLimit>> parse_sla(std::string_view text) {
  std::vector<LatencyLimit> out;
  for (std::string_view tok : split(text, ',')) {
    const auto bad = [&](const std::string& why) {
      return invalid_argument("--sla: '", tok, "': ", why,
                              " (expected STAT<=N UNIT, e.g. p99<=30ms; STAT is p50, p90, p95, "
                              "p99 or max; UNIT is us, ms or s)");
    };
    if (tok.empty()) return invalid_argument("--sla: empty limit in '", text, "'");
    const size_t op = tok.find("<=");
    if (op == std::string_view::npos) return bad("no '<='");
    const std::string_view stat = trim(tok.substr(0, op));
    LatencyLimit lim;
    if (stat == "p50")
      lim.stat = LatencyStat::kP50;
    else if (stat == "p90")
      lim.stat = LatencyStat::kP90;
    else if (stat == "p95")
      lim.stat = LatencyStat::kP95;
    else if (stat == "p99")
      lim.stat = LatencyStat::kP99;
    else if (stat == "max")
      lim.stat = LatencyStat::kMax;
    else
      return bad(str_cat("unknown statistic '", stat, "'"));
    double v = 0;
    std::string_view unit;
    if (!leading_number(tok.substr(op + 2), &v, &unit)) return bad("no non-negative number");
    if (unit == "us")
      lim.max_ms = v / 1000;
    else if (unit == "ms")
      lim.max_ms = v;
    else if (unit == "s")
      lim.max_ms = v * 1000;
    else
      return bad(unit.empty() ? "missing unit" : str_cat("unknown unit '", unit, "'"));
    out.push_back(lim);
  }
  return out;
}

Result<int64_t> parse_memory(std::string_view text) {
  const auto bad = [&](const std::string& why) {
    return invalid_argument("--max-memory: '", text, "': ", why,
                            " (expected N UNIT, e.g. 2GiB; UNIT is B, KiB, MiB, GiB, TiB, KB, "
                            "MB, GB or TB)");
  };
  double v = 0;
  std::string_view unit;
  if (!leading_number(text, &v, &unit)) return bad("no non-negative number");
  struct U {
    const char* name;
    double scale;
  };
  const U units[] = {{"B", 1},
                     {"KiB", 1024.0},
                     {"MiB", 1048576.0},
                     {"GiB", 1073741824.0},
                     {"TiB", 1099511627776.0},
                     {"KB", 1e3},
                     {"MB", 1e6},
                     {"GB", 1e9},
                     {"TB", 1e12}};
  if (unit.empty()) return bad("missing unit");
  for (const U& u : units)
    if (unit == u.name) {
      const double bytes = v * u.scale;
      if (bytes > 9e18) return bad("too large");
      return static_cast<int64_t>(std::llround(bytes));
    }
  return bad(str_cat("unknown unit '", unit, "'"));
}

Result<double> parse_throughput(std::string_view text) {
  double v = 0;
  std::string_view unit;
  if (!leading_number(text, &v, &unit) || unit != "/s")
    return invalid_argument("--min-throughput: '", text,
                            "': expected N/s (items per second), e.g. 200/s");
  return v;
}

Status parse_agreement(std::string_view text, Constraints* out) {
  for (std::string_view tok : split(text, ',')) {
    const size_t op = tok.find(">=");
    const std::string_view name = op == std::string_view::npos ? tok : trim(tok.substr(0, op));
    double v = 0;
    std::string_view rest;
    const bool known = name == "cosine" || name == "top1";
    if (op == std::string_view::npos || !known || !leading_number(tok.substr(op + 2), &v, &rest) ||
        !rest.empty() || v > 1)
      return invalid_argument("--min-agreement: '", tok,
                              "': expected cosine>=X or top1>=X with X in [0, 1], e.g. "
                              "cosine>=0.999");
    (name == "cosine" ? out->min_cosine : out->min_top1) = v;
  }
  return Status::Ok();
}

std::vector<std::string> violations(const Candidate& c, const Constraints& k) {
  std::vector<std::string> out;
  if (c.failed_requests > 0)
    out.push_back(str_cat(c.failed_requests, c.failed_requests == 1 ? " failed request" : " failed requests"));
  for (const LatencyLimit& lim : k.sla) {
    const double v = c.latency(lim.stat);
    const char* name = latency_stat_name(lim.stat);
    if (v < 0)
      out.push_back(str_cat(name, " not recorded (--sla needs it)"));
    else if (v > lim.max_ms)
      out.push_back(str_cat(name, " ", format_ms(v), " > ", format_ms(lim.max_ms)));
  }
  if (k.max_memory) {
    if (c.peak_rss_bytes < 0)
      out.push_back("peak RSS not recorded (--max-memory needs it)");
    else if (c.peak_rss_bytes > *k.max_memory)
      out.push_back(str_cat("peak RSS ", format_bytes(static_cast<double>(c.peak_rss_bytes)), " > ",
                            format_bytes(static_cast<double>(*k.max_memory))));
  }
  if (k.min_throughput) {
    if (c.throughput < 0)
      out.push_back("throughput not recorded (--min-throughput needs it)");
    else if (c.throughput < *k.min_throughput)
      out.push_back(
          str_cat("throughput ", format_rate(c.throughput), " < ", format_rate(*k.min_throughput)));
  }
  const auto agreement = [&](const std::optional<double>& limit, double value, const char* name) {
    if (!limit || c.is_reference) return;
    if (value < 0)
      out.push_back(str_cat(
          name, " agreement not measured (",
          c.agreement_note.empty() ? "not recorded for these outputs" : c.agreement_note, ")"));
    else if (value < *limit)
      out.push_back(str_cat(name, " ", fmt("%.6f", value), " < ", fmt("%.6f", *limit)));
  };
  agreement(k.min_cosine, c.min_cosine, "cosine");
  agreement(k.min_top1, c.min_top1, "top1");
  return out;
}

}  // namespace osprey::bench::select
