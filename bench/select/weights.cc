#include "select/weights.h"

#include <charconv>
#include <cmath>
#include <string>

namespace osprey::bench::select {

const char* criterion_name(Criterion c) {
  switch (c) {
    case Criterion::kLatency: return "latency";
    case Criterion::kThroughput: return "throughput";
    case Criterion::kMemory: return "memory";
    case Criterion::kColdStart: return "cold_start";
  }
  return "?";
}

bool higher_is_better(Criterion c) {
  return c == Criterion::kThroughput;
}

Weights default_weights() {
  return {0.4, 0.3, 0.2, 0.1};
}

Result<Weights> parse_weights(std::string_view text) {
  Weights w{0, 0, 0, 0};
  std::array<bool, kCriteria> seen{};
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view tok = text.substr(start, end - start);
    while (!tok.empty() && tok.front() == ' ') tok.remove_prefix(1);
    while (!tok.empty() && tok.back() == ' ') tok.remove_suffix(1);
    start = end + 1;
    const size_t eq = tok.find('=');
    if (eq == std::string_view::npos)
      return invalid_argument("--weights: '", tok,
                              "': expected NAME=WEIGHT (names: latency, throughput, memory, "
                              "cold_start)");
    const std::string_view name = tok.substr(0, eq), value = tok.substr(eq + 1);
    size_t idx = kCriteria;
    for (size_t i = 0; i < kCriteria; ++i)
      if (name == criterion_name(static_cast<Criterion>(i))) idx = i;
    if (idx == kCriteria)
      return invalid_argument("--weights: unknown criterion '", name,
                              "' (known: latency, throughput, memory, cold_start)");
    if (seen[idx]) return invalid_argument("--weights: '", name, "' is given twice");
    seen[idx] = true;
    double v = 0;
    const auto r = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || r.ec != std::errc() || r.ptr != value.data() + value.size() ||
        !std::isfinite(v) || v < 0 || value.front() == '-')
      return invalid_argument("--weights: '", tok, "': the weight must be a non-negative number");
    w[idx] = v;
  }
  double sum = 0;
  for (double v : w) sum += v;
  if (sum <= 0) return invalid_argument("--weights: '", text, "': all weights are zero");
  for (double& v : w) v /= sum;
  return w;
}

}  // namespace osprey::bench::select
