// The MLPerf-Server-style search: the highest request rate whose latency percentile stays
// within a bound, by binary search between a low and a high rate. The measurement is a
// function so the search logic is tested with a fake one.
#pragma once

#include <functional>
#include <vector>

#include "osprey/status.h"

namespace osprey::loadgen {

struct Probe {
  double rate = 0;
  double latency_ms = 0;  // the bounded percentile measured at this rate
  bool met = false;
};

struct SearchResult {
  bool found = false;   // false when even the lowest rate misses the bound
  double best_rate = 0;  // highest probed rate that met the bound
  std::vector<Probe> probes;  // in the order they ran
};

struct SearchPlan {
  double low = 1, high = 100;  // requests/s, 0 < low <= high
  double bound_ms = 0;         // > 0
  double precision = 0.05;     // stop when (hi - lo) / hi <= precision
  int max_probes = 12;
};

// `measure(rate)` returns the bounded percentile in ms at that rate. Probes `low` (a miss ends
// the search), then `high` (a hit ends it), then bisects.
Result<SearchResult> search_max_rate(const SearchPlan& plan,
                                     const std::function<Result<double>(double rate)>& measure);

}  // namespace osprey::loadgen
