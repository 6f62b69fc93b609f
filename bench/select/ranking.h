// The decision matrix of `osprey select`: constraints filter candidates, each criterion is
// min-max normalized across the eligible ones (with its direction), a weighted sum ranks them,
// and every candidate but the winner gets the reason it lost.
//
// A weighted criterion that NO candidate passing the constraints records (memory and cold start
// of `osprey perf` results) is dropped from the weights for the whole comparison: the others are
// renormalized and Selection::notes says so. A criterion that some record and others do not
// makes the others ineligible ("memory not recorded"). Unknown is never scored as best or 0. Pure functions: the same
// candidates in any order give the same Selection.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "osprey/status.h"
#include "select/candidate.h"
#include "select/constraints.h"
#include "select/weights.h"

namespace osprey::bench::select {

struct SelectOptions {
  Constraints constraints;
  Weights weights = default_weights();           // normalized to sum to 1
  LatencyStat latency_stat = LatencyStat::kP99;  // what the latency criterion scores
  // Which model to decide for when the results hold several: its path as recorded, its file
  // name or its file name without extension. Empty: the results must hold exactly one model.
  std::string model;
};

struct RankedCandidate {
  Candidate candidate;
  std::array<double, kCriteria> raw{};    // raw value per criterion (-1 = not recorded)
  std::array<double, kCriteria> score{};  // normalized to [0, 1] (-1 = not recorded)
  double total = 0;                       // sum of weight x score
  std::string why_lost;                   // empty for the winner
};

struct IneligibleCandidate {
  Candidate candidate;
  std::vector<std::string> reasons;
};

struct Selection {
  std::string model;
  Measured measured = Measured::kInProcess;  // what every candidate's numbers measure
  Weights weights{};  // as used: dropped criteria weigh 0, the rest sum to 1
  std::vector<std::string> notes;  // criteria dropped from the weights, and why
  LatencyStat latency_stat = LatencyStat::kP99;
  std::vector<RankedCandidate> ranking;  // best first; empty when nothing is eligible
  std::vector<IneligibleCandidate> ineligible;
};

// Min-max normalization of one criterion across candidates: the best value scores 1, the worst
// 0. Values < 0 are "not recorded": they score -1 and take no part. When every recorded value
// is equal (or there is only one), each scores 1.
std::vector<double> normalize(const std::vector<double>& raw, bool higher_better);

// The raw value a candidate has for a criterion (-1 when not recorded). Memory is peak RSS in
// bytes, cold start is load + first inference in ms.
double raw_value(const Candidate& c, Criterion criterion, LatencyStat latency_stat);

// "latency 1.23 ms", "throughput 260/s", "memory 120.5 MiB", "cold_start 45.0 ms".
std::string format_raw(Criterion criterion, double value);

// Ranks `candidates` for one model. Errors: the results hold several models and none was
// chosen, or the chosen model is not among them (the message lists the models present); the
// results mix in-process and through-a-server measurements (they do not measure the same
// latency); every weighted criterion was dropped (nothing left to rank by).
Result<Selection> select_candidates(const std::vector<Candidate>& candidates,
                                    const SelectOptions& options);

}  // namespace osprey::bench::select
