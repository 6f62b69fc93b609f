// What `osprey select` prints: a Selection as text (ranking table, the recommendation in one
// sentence, why every other candidate lost) or as JSON (--json). Same Selection, same bytes.
#pragma once

#include <string>
#include <vector>

#include "select/constraints.h"
#include "select/ranking.h"

namespace osprey::bench::select {

// "p99 <= 30 ms", "peak RSS <= 2.0 GiB", "throughput >= 200/s", "cosine >= 0.999000".
std::vector<std::string> describe_constraints(const Constraints& constraints);

// The one-sentence recommendation ("Recommended: ..."); empty when nothing is eligible.
std::string recommendation_sentence(const Selection& selection);

std::string selection_text(const Selection& selection, const Constraints& constraints);
std::string selection_json(const Selection& selection, const Constraints& constraints);

}  // namespace osprey::bench::select
