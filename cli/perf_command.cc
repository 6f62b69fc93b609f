// `osprey perf`: a load generator for any KServe v2 server (HTTP or gRPC), perf_analyzer
// style. The work is in bench/loadgen/; this file maps options onto it and writes the reports.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "options.h"
#include "report.h"
#include "request_data.h"
#include "runner.h"
#include "transport.h"

namespace osprey::cli {
namespace {

namespace lg = osprey::loadgen;

struct PerfArgs {
  std::string model, version, url = "localhost", protocol = "http";
  std::string concurrency_range, request_rate_range, distribution = "poisson";
  std::string input_data = "random", out, latency_bound;
  std::vector<std::string> shapes;
  int64_t batch_size = 1;
  double measurement_interval_ms = 5000, stability_percentage = 10, duration_s = 0;
  double request_timeout_s = 30;
  int max_trials = 10, max_threads = 16;
  uint64_t seed = 0;
  bool http_json = false, search = false, verbose_csv = false;
};

Status write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.good()) return invalid_argument("--out: cannot write ", path.string());
  return Status();
}

Result<std::unique_ptr<lg::Transport>> connect(const PerfArgs& a) {
  lg::Protocol protocol;
  if (a.protocol == "http") protocol = lg::Protocol::kHttp;
  else if (a.protocol == "grpc") protocol = lg::Protocol::kGrpc;
  else return invalid_argument("--protocol: '", a.protocol, "' is not http or grpc");
  if (!(a.request_timeout_s > 0)) return invalid_argument("--request-timeout must be > 0 s");
  lg::TransportOptions o;
  OSPREY_ASSIGN_OR_RETURN(o.endpoint, lg::parse_endpoint(a.url, protocol));
  o.model = a.model;
  o.version = a.version;
  o.request_timeout_s = a.request_timeout_s;
  o.http_json = a.http_json;
  if (protocol == lg::Protocol::kHttp) return lg::make_http_transport(o);
#ifdef OSPREY_LOADGEN_HAS_GRPC
  if (a.http_json) return invalid_argument("--http-json applies to --protocol http only");
  return lg::make_grpc_transport(o);
#else
  return unimplemented("--protocol grpc: this build of osprey has no gRPC support");
#endif
}

Status prepare_requests(const PerfArgs& a, lg::Transport& transport) {
  OSPREY_ASSIGN_OR_RETURN(lg::ModelInfo model, transport.metadata());
  std::vector<lg::ShapeOverride> overrides;
  for (const std::string& s : a.shapes) {
    OSPREY_ASSIGN_OR_RETURN(lg::ShapeOverride o, lg::parse_shape_override(s));
    bool known = false;
    for (const auto& in : model.inputs) known |= in.name == o.name;
    if (!known) return invalid_argument("--shape: model '", a.model, "' has no input '", o.name, "'");
    overrides.push_back(std::move(o));
  }
  if (a.batch_size < 1) return invalid_argument("--batch-size must be >= 1");
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& in : model.inputs) {
    OSPREY_ASSIGN_OR_RETURN(auto shape, lg::resolve_shape(in, overrides, a.batch_size));
    shapes.push_back(std::move(shape));
  }
  OSPREY_ASSIGN_OR_RETURN(auto inputs, lg::make_inputs(model, shapes, lg::parse_input_source(a.input_data, a.seed)));
  return transport.prepare(inputs);
}

Status run_perf(const PerfArgs& a) {
  const bool rate_mode = !a.request_rate_range.empty();
  if (rate_mode && !a.concurrency_range.empty())
    return invalid_argument("give --concurrency-range or --request-rate-range, not both");
  std::optional<lg::LatencyBound> bound;
  if (!a.latency_bound.empty()) {
    OSPREY_ASSIGN_OR_RETURN(bound, lg::parse_latency_bound(a.latency_bound));
    if (!rate_mode) return invalid_argument("--latency-bound needs --request-rate-range LOW:HIGH");
  }
  if (a.search && !bound) return invalid_argument("--search needs --latency-bound pNN<=MS");
  OSPREY_ASSIGN_OR_RETURN(std::vector<double> values,
                          rate_mode ? lg::parse_range(a.request_rate_range, "--request-rate-range")
                                    : lg::parse_range(a.concurrency_range.empty() ? "1" : a.concurrency_range,
                                                      "--concurrency-range"));
  OSPREY_ASSIGN_OR_RETURN(lg::Distribution distribution, lg::parse_distribution(a.distribution));
  if (a.max_threads < 1 || a.max_threads > 1024) return invalid_argument("--max-threads must be 1..1024");
  if (!rate_mode)
    for (double v : values)
      if (v != static_cast<int>(v) || v > 1024)
        return invalid_argument("--concurrency-range: ", v, " is not a whole number of workers in 1..1024");
  lg::MeasureSettings measure;
  measure.interval_s = a.measurement_interval_ms / 1e3;
  measure.max_trials = a.max_trials;
  measure.stability.tolerance = a.stability_percentage / 100;
  measure.duration_s = a.duration_s;
  if (a.duration_s < 0) return invalid_argument("--duration must be >= 0 s");
  OSPREY_RETURN_IF_ERROR(lg::validate_settings(measure));

  OSPREY_ASSIGN_OR_RETURN(auto transport, connect(a));
  OSPREY_RETURN_IF_ERROR(prepare_requests(a, *transport));

  std::vector<lg::StepResult> steps;
  auto run_one = [&](double value) -> Result<lg::StepResult> {
    lg::LoadSpec load{rate_mode ? lg::LoadMode::kRequestRate : lg::LoadMode::kConcurrency, value, distribution,
                      a.seed + steps.size(), a.max_threads};
    OSPREY_ASSIGN_OR_RETURN(lg::StepResult step, lg::run_step(*transport, load, measure));
    std::printf("%s", lg::step_text(step).c_str());
    std::fflush(stdout);
    steps.push_back(step);
    return step;
  };

  std::optional<lg::SearchResult> search;
  if (bound && (a.search || rate_mode)) {
    lg::SearchPlan plan;
    plan.low = values.front();
    plan.high = values.back();
    plan.bound_ms = bound->max_ms;
    auto probe = [&](double rate) -> Result<double> {
      OSPREY_ASSIGN_OR_RETURN(lg::StepResult step, run_one(rate));
      if (step.client.completed == 0) return unavailable("rate ", rate, "/s: no request succeeded");
      return lg::step_percentile_ms(step, bound->percentile);
    };
    OSPREY_ASSIGN_OR_RETURN(search, lg::search_max_rate(plan, probe));
    if (search->found)
      std::printf("Highest Poisson rate with p%g <= %g ms: %g/s (%zu probes)\n", bound->percentile, bound->max_ms,
                  search->best_rate, search->probes.size());
    else
      std::printf("No probed rate keeps p%g <= %g ms (lowest probed: %g/s)\n", bound->percentile, bound->max_ms,
                  plan.low);
  } else {
    for (double v : values) OSPREY_RETURN_IF_ERROR(run_one(v).status());
  }

  int64_t completed = 0;
  for (const auto& s : steps) completed += s.client.completed;
  if (!a.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(a.out, ec);
    if (ec) return invalid_argument("--out: cannot create ", a.out, ": ", ec.message());
    lg::RunSettings st{a.model, a.url, a.protocol, a.input_data, a.shapes, a.batch_size, measure,
                       a.request_timeout_s, a.http_json};
    OSPREY_RETURN_IF_ERROR(write_file(std::filesystem::path(a.out) / "perf.csv", lg::csv_document(steps, a.verbose_csv)));
    OSPREY_RETURN_IF_ERROR(write_file(std::filesystem::path(a.out) / "perf.json",
                                      lg::json_document(st, steps, search ? &*search : nullptr,
                                                        bound ? bound->percentile : 0, bound ? bound->max_ms : 0)));
    std::printf("Wrote %s/perf.csv and %s/perf.json\n", a.out.c_str(), a.out.c_str());
  }
  if (completed == 0) {
    std::string first_error = "unknown";
    for (const auto& s : steps)
      if (!s.client.errors.empty()) first_error = s.client.errors.begin()->first;
    return unavailable("no request succeeded (first error: ", first_error, ")");
  }
  return Status();
}

}  // namespace

Action add_perf_command(CLI::App& app) {
  auto args = std::make_shared<PerfArgs>();
  CLI::App* cmd = app.add_subcommand("perf", "Load-test a model on a KServe v2 server (HTTP or gRPC)");
  cmd->add_option("-m,--model", args->model, "Model name")->required();
  cmd->add_option("-x,--model-version", args->version, "Model version (default: the server's choice)");
  cmd->add_option("-u,--url", args->url, "HOST[:PORT] (default port 8000 http, 8001 grpc)")->capture_default_str();
  cmd->add_option("-i,--protocol", args->protocol, "http or grpc")->capture_default_str();
  cmd->add_option("--concurrency-range", args->concurrency_range, "START[:END[:STEP]] outstanding requests");
  cmd->add_option("--request-rate-range", args->request_rate_range, "START[:END[:STEP]] requests/s (open loop)");
  cmd->add_option("--distribution", args->distribution, "poisson or constant")->capture_default_str();
  cmd->add_option("--max-threads", args->max_threads, "Request-rate mode: sending workers")->capture_default_str();
  cmd->add_option("-p,--measurement-interval", args->measurement_interval_ms, "Window length, ms")
      ->capture_default_str();
  cmd->add_option("-s,--stability-percentage", args->stability_percentage, "Stability tolerance, %")
      ->capture_default_str();
  cmd->add_option("-r,--max-trials", args->max_trials, "Windows before giving up on stability")
      ->capture_default_str();
  cmd->add_option("--duration", args->duration_s, "Measure one fixed window of S seconds instead");
  cmd->add_option("--input-data", args->input_data, "random, zero, or DIR of NAME.npy")->capture_default_str();
  cmd->add_option("--shape", args->shapes, "NAME=D1,D2 for variable dims (repeatable)");
  cmd->add_option("-b,--batch-size", args->batch_size, "Fills a variable first dim")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed for random inputs and Poisson schedules")->capture_default_str();
  cmd->add_option("--request-timeout", args->request_timeout_s, "Per-request timeout, s")->capture_default_str();
  cmd->add_flag("--http-json", args->http_json, "HTTP: JSON tensors instead of the binary extension");
  cmd->add_option("--latency-bound", args->latency_bound, "pNN<=MS: search the highest rate meeting it");
  cmd->add_flag("--search", args->search, "Binary-search the rate range under --latency-bound");
  cmd->add_flag("--verbose-csv", args->verbose_csv, "CSV: add Avg latency, request/response, response wait");
  cmd->add_option("--out", args->out, "Directory for perf.csv and perf.json");
  return [args] { return run_perf(*args); };
}

}  // namespace osprey::cli
