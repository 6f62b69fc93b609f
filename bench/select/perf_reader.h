// Reads a perf.json written by `osprey perf --out DIR` (a load test of a KServe v2 server) into
// `osprey select` candidates: one per step (a concurrency or request-rate level).
//
//   framework  "server@" + settings.url (the endpoint that was measured, e.g.
//   server@localhost:8001) model      settings.model (the model's name in the server's repository)
//   config     settings.protocol + the step's load (concurrency=N or request_rate=R/s DIST)
//              + settings.batch_size + settings.shapes ("default" when none)
//   latency    the step's client-side latency_ms p50/p90/p95/p99/max
//   throughput the step's throughput (requests/s) x batch_size = items/s
//   memory, cold start: not recorded (a load test does not see the server's RSS or load time)
//   agreement  not recorded (perf does not compare outputs)
// A step with failed requests keeps them in Candidate::failed_requests; the ranking refuses it.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "osprey/status.h"
#include "select/candidate.h"

namespace osprey::bench::select {

// `doc` is the parsed perf.json (an object with 'settings' and 'steps').
Result<std::vector<Candidate>> parse_perf(const rapidjson::Value& doc, const std::string& source);

}  // namespace osprey::bench::select
