#include "rate_search.h"

namespace osprey::loadgen {

Result<SearchResult> search_max_rate(const SearchPlan& plan,
                                     const std::function<Result<double>(double rate)>& measure) {
  if (!(plan.low > 0) || plan.high < plan.low)
    return invalid_argument("rate search: need 0 < low <= high (got ", plan.low, " and ", plan.high, ")");
  if (!(plan.bound_ms > 0)) return invalid_argument("rate search: latency bound must be > 0 ms");
  if (!(plan.precision > 0) || plan.max_probes < 2)
    return invalid_argument("rate search: precision must be > 0 and max probes >= 2");
  SearchResult result;
  auto probe = [&](double rate) -> Result<bool> {
    OSPREY_ASSIGN_OR_RETURN(double latency, measure(rate));
    const bool met = latency <= plan.bound_ms;
    result.probes.push_back({rate, latency, met});
    if (met && rate > result.best_rate) {
      result.best_rate = rate;
      result.found = true;
    }
    return met;
  };
  OSPREY_ASSIGN_OR_RETURN(bool low_met, probe(plan.low));
  if (!low_met || plan.high == plan.low) return result;
  OSPREY_ASSIGN_OR_RETURN(bool high_met, probe(plan.high));
  if (high_met) return result;
  double lo = plan.low, hi = plan.high;
  while (static_cast<int>(result.probes.size()) < plan.max_probes && (hi - lo) / hi > plan.precision) {
    const double mid = (lo + hi) / 2;
    OSPREY_ASSIGN_OR_RETURN(bool met, probe(mid));
    (met ? lo : hi) = mid;
  }
  return result;
}

}  // namespace osprey::loadgen
