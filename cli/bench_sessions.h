// `osprey bench --sessions N`: N sessions of one model run at the same time in this process, each
// from a thread of its own — what a server with N instances of a model does, and the check that
// N sessions x T threads on fewer cores do not collapse.
#pragma once

#include <vector>

#include "osprey/session.h"
#include "osprey/status.h"

namespace osprey::cli {

struct ConcurrentRuns {
  std::vector<double> samples_ms;          // every timed run of every session
  std::vector<double> session_p50_ms;      // per session
  double wall_s = 0;                       // the timed phase, first start to last finish
};

// Each session does `warmup` untimed runs, then all start their timed runs together: `iterations`
// each, or until `duration_s` seconds have passed when it is > 0. The first failed run ends the
// measurement with its error (naming the session).
Result<ConcurrentRuns> run_sessions_concurrently(const std::vector<const Session*>& sessions,
                                                 const std::vector<NamedTensor>& feeds, int warmup,
                                                 int iterations, double duration_s);

}  // namespace osprey::cli
