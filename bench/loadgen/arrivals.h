// Request-rate mode's schedule: inter-arrival gaps for a target rate, either constant (1/rate)
// or Poisson (exponential gaps with mean 1/rate), from a seeded generator so runs repeat.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

#include "osprey/status.h"

namespace osprey::loadgen {

enum class Distribution { kConstant, kPoisson };
const char* distribution_name(Distribution d);  // "constant", "poisson"
Result<Distribution> parse_distribution(std::string_view text);

class ArrivalSchedule {
 public:
  // rate > 0 requests per second.
  ArrivalSchedule(double rate, Distribution distribution, uint64_t seed);
  // Offset of the next request from the schedule's start, in nanoseconds (strictly increasing
  // for constant; non-decreasing for Poisson).
  int64_t next_offset_ns();

 private:
  double mean_gap_ns_;
  Distribution distribution_;
  std::mt19937_64 rng_;
  std::exponential_distribution<double> exp_{1.0};
  double offset_ns_ = 0;
};

}  // namespace osprey::loadgen
