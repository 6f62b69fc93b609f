#include "options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace osprey::loadgen {
namespace {

bool parse_double(std::string_view s, double* out) {
  if (s.empty()) return false;
  const std::string copy(s);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(copy.c_str(), &end);
  if (errno != 0 || end != copy.c_str() + copy.size() || !std::isfinite(v)) return false;
  *out = v;
  return true;
}

bool parse_int(std::string_view s, int64_t* out) {
  if (s.empty()) return false;
  const std::string copy(s);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(copy.c_str(), &end, 10);
  if (errno != 0 || end != copy.c_str() + copy.size()) return false;
  *out = v;
  return true;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (;;) {
    const size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

}  // namespace

Result<std::vector<double>> parse_range(std::string_view text, std::string_view option) {
  const auto parts = split(text, ':');
  if (parts.size() > 3)
    return invalid_argument(option, ": '", text, "' is not START[:END[:STEP]]");
  double v[3] = {0, 0, 1};
  for (size_t i = 0; i < parts.size(); ++i)
    if (!parse_double(parts[i], &v[i]))
      return invalid_argument(option, ": '", parts[i], "' in '", text, "' is not a number");
  if (parts.size() == 1) v[1] = v[0];
  if (v[0] <= 0) return invalid_argument(option, ": start must be > 0 (got '", text, "')");
  if (v[1] < v[0]) return invalid_argument(option, ": end must be >= start (got '", text, "')");
  if (v[2] <= 0) return invalid_argument(option, ": step must be > 0 (got '", text, "')");
  const double count = std::floor((v[1] - v[0]) / v[2] + 1e-9) + 1;
  if (count > 10000) return invalid_argument(option, ": '", text, "' expands to more than 10000 steps");
  std::vector<double> values;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) values.push_back(v[0] + i * v[2]);
  return values;
}

Result<LatencyBound> parse_latency_bound(std::string_view text) {
  std::string_view s = text;
  const size_t le = s.find("<=");
  if (s.size() < 2 || s[0] != 'p' || le == std::string_view::npos)
    return invalid_argument("--latency-bound: '", text, "' is not pNN<=MS (e.g. p99<=50)");
  LatencyBound b;
  if (!parse_double(s.substr(1, le - 1), &b.percentile) ||
      (b.percentile != 50 && b.percentile != 90 && b.percentile != 95 && b.percentile != 99))
    return invalid_argument("--latency-bound: percentile in '", text, "' must be p50, p90, p95 or p99");
  std::string_view value = s.substr(le + 2);
  if (value.size() > 2 && value.substr(value.size() - 2) == "ms") value.remove_suffix(2);
  if (!parse_double(value, &b.max_ms) || b.max_ms <= 0)
    return invalid_argument("--latency-bound: bound in '", text, "' must be a number of ms > 0");
  return b;
}

Result<ShapeOverride> parse_shape_override(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return invalid_argument("--shape: '", text, "' is not NAME=D1,D2,...");
  ShapeOverride o;
  o.name = std::string(text.substr(0, eq));
  const std::string_view dims = text.substr(eq + 1);
  if (dims.empty()) return o;
  for (std::string_view d : split(dims, ',')) {
    int64_t v = 0;
    if (!parse_int(d, &v) || v < 0)
      return invalid_argument("--shape: dimension '", d, "' in '", text, "' is not an integer >= 0");
    o.dims.push_back(v);
  }
  return o;
}

}  // namespace osprey::loadgen
