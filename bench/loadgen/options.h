// Parsing of `osprey perf`'s value syntaxes: ranges "A:B:S", latency bounds "p99<=N" and
// shapes "NAME=D1,D2". Pure functions; errors name the option and the offending text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "osprey/status.h"

namespace osprey::loadgen {

// "A", "A:B" or "A:B:S" (perf_analyzer's syntax; step defaults to 1) expanded to the values
// A, A+S, ... <= B. All values must be > 0, B >= A and S > 0; at most 10000 values.
Result<std::vector<double>> parse_range(std::string_view text, std::string_view option);

struct LatencyBound {
  double percentile = 99;  // 50, 90, 95 or 99
  double max_ms = 0;       // > 0
};

// "p99<=50" or "p95<=12.5ms": percentile among 50/90/95/99, bound in milliseconds.
Result<LatencyBound> parse_latency_bound(std::string_view text);

struct ShapeOverride {
  std::string name;
  std::vector<int64_t> dims;  // each >= 0
};

// "NAME=D1,D2,..." (an empty list after '=' is a scalar).
Result<ShapeOverride> parse_shape_override(std::string_view text);

}  // namespace osprey::loadgen
