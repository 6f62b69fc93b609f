// The criteria `osprey select` scores candidates on, and their weights.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "osprey/status.h"

namespace osprey::bench::select {

// Criteria in their fixed order (scores and totals are always summed in this order).
enum class Criterion { kLatency = 0, kThroughput, kMemory, kColdStart };
inline constexpr size_t kCriteria = 4;
const char* criterion_name(Criterion c);  // "latency", "throughput", "memory", "cold_start"
// Whether a higher raw value is better (throughput) or a lower one (the others).
bool higher_is_better(Criterion c);

// Non-negative weights that sum to 1, indexed by Criterion.
using Weights = std::array<double, kCriteria>;

// latency=0.4, throughput=0.3, memory=0.2, cold_start=0.1.
Weights default_weights();

// "latency=0.4,throughput=0.3,memory=0.2,cold_start=0.1". Criteria not named weigh 0; each
// name at most once; values non-negative and finite; not all zero. The result is normalized to
// sum to 1.
Result<Weights> parse_weights(std::string_view text);

}  // namespace osprey::bench::select
