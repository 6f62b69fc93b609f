// Latency statistics for `osprey bench`: the bench's statistics (bench/core/statistics.h), the
// one percentile definition used in osprey (numpy.percentile's default, linear interpolation
// between closest ranks; sample standard deviation).
#pragma once

#include "core/statistics.h"

namespace osprey::cli {

using LatencySummary = bench::Summary;
using bench::percentile_sorted;
using bench::summarize;

}  // namespace osprey::cli
