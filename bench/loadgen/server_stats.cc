#include "server_stats.h"

#include <rapidjson/document.h>

#include <cstdio>

namespace osprey::loadgen {
namespace {

uint64_t get_u64(const rapidjson::Value& obj, const char* key) {
  if (!obj.IsObject()) return 0;
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return 0;
  if (it->value.IsUint64()) return it->value.GetUint64();
  if (it->value.IsString()) return std::strtoull(it->value.GetString(), nullptr, 10);
  return 0;
}

const rapidjson::Value& member(const rapidjson::Value& obj, const char* key) {
  static const rapidjson::Value kNull;
  if (!obj.IsObject()) return kNull;
  auto it = obj.FindMember(key);
  return it == obj.MemberEnd() ? kNull : it->value;
}

}  // namespace

Result<ServerStats> parse_stats_json(std::string_view json, const std::string& model) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject())
    return invalid_argument("server statistics: response is not a JSON object");
  const rapidjson::Value& list = member(doc, "model_stats");
  if (!list.IsArray()) return invalid_argument("server statistics: no 'model_stats' array");
  ServerStats s;
  bool found = false;
  for (const auto& m : list.GetArray()) {
    const rapidjson::Value& name = member(m, "name");
    if (!name.IsString() || model != name.GetString()) continue;
    found = true;
    s.inference_count += get_u64(m, "inference_count");
    s.execution_count += get_u64(m, "execution_count");
    const rapidjson::Value& is = member(m, "inference_stats");
    s.success_count += get_u64(member(is, "success"), "count");
    s.success_ns += get_u64(member(is, "success"), "ns");
    s.fail_count += get_u64(member(is, "fail"), "count");
    s.queue_ns += get_u64(member(is, "queue"), "ns");
    s.compute_input_ns += get_u64(member(is, "compute_input"), "ns");
    s.compute_infer_ns += get_u64(member(is, "compute_infer"), "ns");
    s.compute_output_ns += get_u64(member(is, "compute_output"), "ns");
  }
  if (!found) return not_found("server statistics: no entry for model '", model, "'");
  return s;
}

Result<ServerStats> stats_delta(const ServerStats& before, const ServerStats& after) {
  ServerStats d;
  bool backwards = false;
  auto sub = [&](uint64_t a, uint64_t b) {
    if (a < b) backwards = true;
    return a >= b ? a - b : 0;
  };
  d.inference_count = sub(after.inference_count, before.inference_count);
  d.execution_count = sub(after.execution_count, before.execution_count);
  d.success_count = sub(after.success_count, before.success_count);
  d.success_ns = sub(after.success_ns, before.success_ns);
  d.fail_count = sub(after.fail_count, before.fail_count);
  d.queue_ns = sub(after.queue_ns, before.queue_ns);
  d.compute_input_ns = sub(after.compute_input_ns, before.compute_input_ns);
  d.compute_infer_ns = sub(after.compute_infer_ns, before.compute_infer_ns);
  d.compute_output_ns = sub(after.compute_output_ns, before.compute_output_ns);
  if (backwards)
    return failed_precondition("server statistics went backwards during the measurement "
                               "(server restarted or model reloaded?)");
  return d;
}

Breakdown compute_breakdown(double client_avg_us, double client_send_us, double client_recv_us,
                            const ServerStats& delta) {
  Breakdown b;
  b.client_avg_us = client_avg_us;
  b.client_send_us = client_send_us;
  b.client_recv_us = client_recv_us;
  if (delta.success_count == 0) {
    b.where = "no server statistics for this step (no successful requests counted by the server)";
    return b;
  }
  b.has_server = true;
  const double n = static_cast<double>(delta.success_count);
  b.server_queue_us = static_cast<double>(delta.queue_ns) / n / 1e3;
  b.compute_input_us = static_cast<double>(delta.compute_input_ns) / n / 1e3;
  b.compute_infer_us = static_cast<double>(delta.compute_infer_ns) / n / 1e3;
  b.compute_output_us = static_cast<double>(delta.compute_output_ns) / n / 1e3;
  const double compute = b.compute_input_us + b.compute_infer_us + b.compute_output_us;
  const double other = client_avg_us - client_send_us - client_recv_us - b.server_queue_us - compute;
  b.network_us = other > 0 ? other : 0;
  const double io = b.network_us + client_send_us + client_recv_us;
  const double total = io + b.server_queue_us + compute;
  if (total <= 0) {
    b.where = "no measurable time";
    return b;
  }
  const char* name = "compute";
  double biggest = compute;
  if (b.server_queue_us > biggest) name = "server queue", biggest = b.server_queue_us;
  if (io > biggest) name = "I/O (network, HTTP/gRPC handling, client)", biggest = io;
  char line[200];
  std::snprintf(line, sizeof line, "most time goes to %s: %.0f%% (compute %.0f%%, queue %.0f%%, I/O %.0f%%)",
                name, 100 * biggest / total, 100 * compute / total, 100 * b.server_queue_us / total,
                100 * io / total);
  b.where = line;
  return b;
}

}  // namespace osprey::loadgen
