#include "select/perf_reader.h"

#include <cstdio>

#include "select/json_fields.h"

namespace osprey::bench::select {
namespace {

using json::integer;
using json::member;
using json::number;
using json::Value;

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// "concurrency=4" or "request_rate=200/s poisson".
Result<std::string> load_label(const Value& step, const std::string& where) {
  OSPREY_ASSIGN_OR_RETURN(std::string mode, json::string(step, "mode", where, true));
  if (mode == "concurrency") {
    OSPREY_ASSIGN_OR_RETURN(double n, number(step, "concurrency", where));
    if (n < 0) return invalid_argument(where, ": 'concurrency' is missing");
    return "concurrency=" + shortest(n);
  }
  if (mode == "request_rate") {
    OSPREY_ASSIGN_OR_RETURN(double r, number(step, "request_rate", where));
    if (r < 0) return invalid_argument(where, ": 'request_rate' is missing");
    OSPREY_ASSIGN_OR_RETURN(std::string dist, json::string(step, "distribution", where, false));
    return "request_rate=" + shortest(r) + "/s" + (dist.empty() ? "" : " " + dist);
  }
  return invalid_argument(where, ": unknown 'mode' \"", mode,
                          "\" (expected \"concurrency\" or \"request_rate\")");
}

}  // namespace

Result<std::vector<Candidate>> parse_perf(const Value& doc, const std::string& source) {
  const Value& settings = *member(doc, "settings");
  const Value& steps = *member(doc, "steps");
  if (!settings.IsObject() || !steps.IsArray())
    return invalid_argument(source, ": 'settings' must be an object and 'steps' an array");
  const std::string where_settings = source + ": settings";
  Candidate base;
  base.source = source;
  base.measured = Measured::kThroughServer;
  base.precision.clear();  // the server's choice; perf does not see it
  base.threads = 0;        // the server's threads are not part of a perf result
  OSPREY_ASSIGN_OR_RETURN(base.model, json::string(settings, "model", where_settings, true));
  OSPREY_ASSIGN_OR_RETURN(std::string url, json::string(settings, "url", where_settings, true));
  base.framework = "server@" + url;
  OSPREY_ASSIGN_OR_RETURN(base.protocol, json::string(settings, "protocol", where_settings, false));
  if (base.protocol.empty()) base.protocol = "http";
  OSPREY_ASSIGN_OR_RETURN(base.batch, integer(settings, "batch_size", where_settings, 1));
  if (base.batch < 1) return invalid_argument(where_settings, ": 'batch_size' must be >= 1");
  if (const Value* shapes = member(settings, "shapes"); shapes && shapes->IsArray()) {
    std::string joined;
    for (const auto& s : shapes->GetArray())
      if (s.IsString()) joined += (joined.empty() ? "" : ";") + std::string(s.GetString());
    if (!joined.empty()) base.shapes = joined;
  }
  base.agreement_note = "osprey perf does not compare outputs";

  std::vector<Candidate> out;
  for (rapidjson::SizeType i = 0; i < steps.Size(); ++i) {
    const Value& step = steps[i];
    const std::string where = str_cat(source, ": steps[", i, "]");
    if (!step.IsObject()) return invalid_argument(where, " is not an object");
    Candidate c = base;
    OSPREY_ASSIGN_OR_RETURN(c.load, load_label(step, where));
    if (const Value* st = member(step, "stable"); st && st->IsBool() && !st->GetBool())
      c.load += " (not stable)";
    OSPREY_ASSIGN_OR_RETURN(c.failed_requests, integer(step, "failed", where, 0));
    OSPREY_ASSIGN_OR_RETURN(int64_t completed, integer(step, "completed", where, 0));
    OSPREY_ASSIGN_OR_RETURN(double per_s, number(step, "throughput", where));
    c.throughput = per_s < 0 ? -1 : per_s * static_cast<double>(c.batch);
    if (completed <= 0) {
      c.ok = false;
      c.reason = str_cat("no completed requests (", c.failed_requests, " failed)");
    }
    const Value* lat = member(step, "latency_ms");
    if (c.ok && (!lat || !lat->IsObject()))
      return invalid_argument(where, ": 'latency_ms' is missing");
    if (c.ok) {
      const char* keys[kLatencyStats] = {"p50", "p90", "p95", "p99", "max"};
      for (size_t k = 0; k < kLatencyStats; ++k) {
        OSPREY_ASSIGN_OR_RETURN(c.latency_ms[k], number(*lat, keys[k], where + ".latency_ms"));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace osprey::bench::select
