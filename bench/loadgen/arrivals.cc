#include "arrivals.h"

namespace osprey::loadgen {

const char* distribution_name(Distribution d) {
  return d == Distribution::kPoisson ? "poisson" : "constant";
}

Result<Distribution> parse_distribution(std::string_view text) {
  if (text == "poisson") return Distribution::kPoisson;
  if (text == "constant") return Distribution::kConstant;
  return invalid_argument("--distribution: '", text, "' is not poisson or constant");
}

ArrivalSchedule::ArrivalSchedule(double rate, Distribution distribution, uint64_t seed)
    : mean_gap_ns_(1e9 / rate), distribution_(distribution), rng_(seed) {}

int64_t ArrivalSchedule::next_offset_ns() {
  const int64_t current = static_cast<int64_t>(offset_ns_);
  offset_ns_ += distribution_ == Distribution::kPoisson ? exp_(rng_) * mean_gap_ns_ : mean_gap_ns_;
  return current;
}

}  // namespace osprey::loadgen
