#include "report.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace osprey::loadgen {
namespace {

std::string fmt(const char* f, double v) {
  char b[256];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string us(double v) { return fmt("%.0f", std::max(0.0, v)); }

}  // namespace

std::string csv_header(LoadMode mode, bool verbose) {
  std::string h = mode == LoadMode::kRequestRate ? "Request Rate" : "Concurrency";
  h += ",Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,"
       "Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,"
       "p99 latency";
  if (verbose) h += ",Avg latency,request/response,response wait";
  return h;
}

std::string csv_row(const StepResult& s, bool verbose) {
  const Breakdown& b = s.breakdown;
  const auto& l = s.client.latency_ms;
  std::string r = s.load.mode == LoadMode::kRequestRate ? fmt("%g", s.load.value) : fmt("%.0f", s.load.value);
  r.push_back(',');
  r += fmt("%.2f", s.client.throughput);
  for (double v : {b.client_send_us, b.network_us, b.server_queue_us, b.compute_input_us, b.compute_infer_us,
                   b.compute_output_us, b.client_recv_us, l.p50 * 1e3, l.p90 * 1e3, l.p95 * 1e3, l.p99 * 1e3}) {
    r.push_back(',');
    r += us(v);
  }
  if (verbose) {
    const double send_recv = b.client_send_us + b.client_recv_us;
    for (double v : {l.mean * 1e3, send_recv, l.mean * 1e3 - send_recv}) {
      r.push_back(',');
      r += us(v);
    }
  }
  return r;
}

std::string csv_document(const std::vector<StepResult>& steps, bool verbose) {
  if (steps.empty()) return "";
  std::vector<const StepResult*> sorted;
  for (const StepResult& s : steps) sorted.push_back(&s);
  std::stable_sort(sorted.begin(), sorted.end(), [](const StepResult* a, const StepResult* b) {
    return a->client.throughput < b->client.throughput;
  });
  std::string out = csv_header(steps.front().load.mode, verbose) + "\n";
  for (const StepResult* s : sorted) out += csv_row(*s, verbose) + "\n";
  return out;
}

double step_percentile_ms(const StepResult& s, double p) {
  const auto& l = s.client.latency_ms;
  return p == 50 ? l.p50 : p == 90 ? l.p90 : p == 95 ? l.p95 : l.p99;
}

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void kv(Writer& w, const char* k, double v) {
  w.Key(k);
  if (std::isfinite(v)) w.Double(v);
  else w.Null();
}
void kv(Writer& w, const char* k, int64_t v) {
  w.Key(k);
  w.Int64(v);
}
void kv(Writer& w, const char* k, const std::string& v) {
  w.Key(k);
  w.String(v.c_str());
}
void kv(Writer& w, const char* k, bool v) {
  w.Key(k);
  w.Bool(v);
}

void write_step(Writer& w, const StepResult& s) {
  w.StartObject();
  kv(w, "mode", std::string(s.load.mode == LoadMode::kRequestRate ? "request_rate" : "concurrency"));
  kv(w, s.load.mode == LoadMode::kRequestRate ? "request_rate" : "concurrency", s.load.value);
  if (s.load.mode == LoadMode::kRequestRate) {
    kv(w, "distribution", std::string(distribution_name(s.load.distribution)));
    kv(w, "scheduled_requests", s.scheduled);
    kv(w, "late_requests", s.late);
    kv(w, "max_late_ms", s.max_late_ms);
  }
  kv(w, "windows", static_cast<int64_t>(s.windows));
  kv(w, "stable", s.stable);
  kv(w, "measured_s", s.client.duration_s);
  kv(w, "completed", s.client.completed);
  kv(w, "failed", s.client.failed);
  kv(w, "throughput", s.client.throughput);
  w.Key("latency_ms");
  w.StartObject();
  const auto& l = s.client.latency_ms;
  for (auto [k, v] : {std::pair{"min", l.min}, {"mean", l.mean}, {"stdev", l.stdev}, {"p50", l.p50},
                      {"p90", l.p90}, {"p95", l.p95}, {"p99", l.p99}, {"max", l.max}})
    kv(w, k, v);
  w.EndObject();
  w.Key("breakdown_us");
  w.StartObject();
  const Breakdown& b = s.breakdown;
  kv(w, "server_stats", b.has_server);
  for (auto [k, v] : {std::pair{"client_avg", b.client_avg_us}, {"client_send", b.client_send_us},
                      {"network_server_send_recv", b.network_us}, {"server_queue", b.server_queue_us},
                      {"server_compute_input", b.compute_input_us}, {"server_compute_infer", b.compute_infer_us},
                      {"server_compute_output", b.compute_output_us}, {"client_recv", b.client_recv_us}})
    kv(w, k, v);
  kv(w, "where", b.where);
  w.EndObject();
  w.Key("server");
  w.StartObject();
  kv(w, "inference_count", static_cast<int64_t>(s.server_delta.inference_count));
  kv(w, "execution_count", static_cast<int64_t>(s.server_delta.execution_count));
  kv(w, "success_count", static_cast<int64_t>(s.server_delta.success_count));
  kv(w, "fail_count", static_cast<int64_t>(s.server_delta.fail_count));
  if (!s.server_stats_error.empty()) kv(w, "error", s.server_stats_error);
  w.EndObject();
  w.Key("errors");
  w.StartObject();
  for (const auto& [msg, n] : s.client.errors) kv(w, msg.c_str(), n);
  w.EndObject();
  w.EndObject();
}

}  // namespace

std::string json_document(const RunSettings& st, const std::vector<StepResult>& steps,
                          const SearchResult* search, double bound_percentile, double bound_ms) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("settings");
  w.StartObject();
  kv(w, "model", st.model);
  kv(w, "url", st.url);
  kv(w, "protocol", st.protocol);
  kv(w, "input_data", st.input_data);
  kv(w, "batch_size", st.batch_size);
  w.Key("shapes");
  w.StartArray();
  for (const auto& s : st.shapes) w.String(s.c_str());
  w.EndArray();
  kv(w, "http_json", st.http_json);
  kv(w, "measurement_interval_ms", st.measure.interval_s * 1e3);
  kv(w, "duration_s", st.measure.duration_s);
  kv(w, "max_trials", static_cast<int64_t>(st.measure.max_trials));
  kv(w, "stability_percentage", st.measure.stability.tolerance * 100);
  kv(w, "request_timeout_s", st.request_timeout_s);
  w.EndObject();
  w.Key("steps");
  w.StartArray();
  for (const StepResult& s : steps) write_step(w, s);
  w.EndArray();
  if (search != nullptr) {
    w.Key("search");
    w.StartObject();
    kv(w, "percentile", bound_percentile);
    kv(w, "bound_ms", bound_ms);
    kv(w, "found", search->found);
    kv(w, "best_rate", search->best_rate);
    w.Key("probes");
    w.StartArray();
    for (const Probe& p : search->probes) {
      w.StartObject();
      kv(w, "rate", p.rate);
      kv(w, "latency_ms", p.latency_ms);
      kv(w, "met", p.met);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

std::string step_text(const StepResult& s) {
  const auto& l = s.client.latency_ms;
  const Breakdown& b = s.breakdown;
  std::string t = s.load.mode == LoadMode::kRequestRate
                      ? fmt("Request rate %g/s", s.load.value) + " (" + distribution_name(s.load.distribution) + ")"
                      : fmt("Concurrency %.0f", s.load.value);
  t += fmt(": %.2f infer/s, ", s.client.throughput) + std::to_string(s.client.completed) + " ok, " +
       std::to_string(s.client.failed) + " failed, " + std::to_string(s.windows) + " windows" +
       (s.stable ? "" : " (NOT stable)") + "\n";
  t += fmt("  latency ms: p50 %.3f", l.p50) + fmt(" p90 %.3f", l.p90) + fmt(" p95 %.3f", l.p95) +
       fmt(" p99 %.3f", l.p99) + fmt(" avg %.3f\n", l.mean);
  if (b.has_server)
    t += fmt("  avg us: client send %.0f", b.client_send_us) + fmt(", network+server send/recv %.0f", b.network_us) +
         fmt(", queue %.0f", b.server_queue_us) + fmt(", compute input %.0f", b.compute_input_us) +
         fmt(" infer %.0f", b.compute_infer_us) + fmt(" output %.0f", b.compute_output_us) +
         fmt(", client recv %.0f\n", b.client_recv_us);
  t += "  " + b.where + "\n";
  if (s.late > 0)
    t += "  client could not keep the schedule: " + std::to_string(s.late) + " of " + std::to_string(s.scheduled) +
         fmt(" requests sent more than 1 ms late (max %.1f ms); raise --max-threads\n", s.max_late_ms);
  for (const auto& [msg, n] : s.client.errors) t += "  error x" + std::to_string(n) + ": " + msg + "\n";
  return t;
}

}  // namespace osprey::loadgen
