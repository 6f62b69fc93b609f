// `osprey select RESULTS.json|perf.json... [--sla ...] [--max-memory ...] [--min-throughput ...]
// [--min-agreement ...] [--weights ...] [--model ...] [--latency STAT] [--json]`: the weighted
// decision matrix over benchmark results (docs/BENCHMARKING.md, "Choosing a framework"). The
// logic lives in the osprey_bench_select library (bench/select/); this file maps options to it.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "select/ranking.h"
#include "select/results_reader.h"
#include "select/select_report.h"

namespace osprey::cli {
namespace {
namespace sel = bench::select;

struct SelectArgs {
  std::vector<std::string> files;
  std::string sla, max_memory, min_throughput, min_agreement, weights, model;
  std::string latency = "p99";
  bool json = false;
};

Result<sel::SelectOptions> make_options(const SelectArgs& a) {
  sel::SelectOptions o;
  if (!a.sla.empty()) {
    OSPREY_ASSIGN_OR_RETURN(o.constraints.sla, sel::parse_sla(a.sla));
  }
  if (!a.max_memory.empty()) {
    OSPREY_ASSIGN_OR_RETURN(o.constraints.max_memory, sel::parse_memory(a.max_memory));
  }
  if (!a.min_throughput.empty()) {
    OSPREY_ASSIGN_OR_RETURN(o.constraints.min_throughput, sel::parse_throughput(a.min_throughput));
  }
  if (!a.min_agreement.empty())
    OSPREY_RETURN_IF_ERROR(sel::parse_agreement(a.min_agreement, &o.constraints));
  if (!a.weights.empty()) {
    OSPREY_ASSIGN_OR_RETURN(o.weights, sel::parse_weights(a.weights));
  }
  const char* stats[] = {"p50", "p90", "p95", "p99", "max"};
  bool known = false;
  for (size_t i = 0; i < sel::kLatencyStats; ++i)
    if (a.latency == stats[i]) o.latency_stat = static_cast<sel::LatencyStat>(i), known = true;
  if (!known)
    return invalid_argument("--latency: '", a.latency, "' is not one of p50, p90, p95, p99, max");
  o.model = a.model;
  return o;
}

Status run_select(const SelectArgs& args) {
  OSPREY_ASSIGN_OR_RETURN(sel::SelectOptions options, make_options(args));
  std::vector<sel::Candidate> all;
  for (const auto& f : args.files) {
    OSPREY_ASSIGN_OR_RETURN(auto some, sel::read_results(f));
    all.insert(all.end(), some.begin(), some.end());
  }
  OSPREY_ASSIGN_OR_RETURN(sel::Selection s, sel::select_candidates(all, options));
  const std::string out = args.json ? sel::selection_json(s, options.constraints)
                                    : sel::selection_text(s, options.constraints);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
  if (!s.ranking.empty()) return Status::Ok();
  std::string why;
  for (const auto& x : s.ineligible) {
    why += (why.empty() ? "" : "; ") + x.candidate.framework + " " +
           sel::config_label(x.candidate) + ": ";
    for (size_t i = 0; i < x.reasons.size(); ++i) why += (i ? ", " : "") + x.reasons[i];
  }
  return failed_precondition("no candidate meets the constraints (", why, ")");
}

}  // namespace

Action add_select_command(CLI::App& app) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* cmd = app.add_subcommand(
      "select",
      "Recommend a framework and configuration from benchmark results (weighted decision matrix)");
  cmd->add_option("RESULTS", args->files,
                  "results.json from 'osprey bench --out', perf.json from 'osprey perf --out' "
                  "(one candidate per load step; memory and cold start are not measured there "
                  "and drop out of the weights), or a candidate list. Bench and perf results "
                  "are not mixed in one selection")
      ->required();
  cmd->add_option("--sla", args->sla,
                  "Latency limits, e.g. 'p99<=30ms' or 'p50<=5ms,p99<=30ms' (us, ms, s)");
  cmd->add_option("--max-memory", args->max_memory,
                  "Peak RSS limit, e.g. 2GiB (B, KiB, MiB, GiB, KB, MB, GB)");
  cmd->add_option("--min-throughput", args->min_throughput,
                  "Throughput floor in items per second, e.g. 200/s");
  cmd->add_option(
      "--min-agreement", args->min_agreement,
      "Output agreement with the reference framework, e.g. cosine>=0.999 or top1>=0.99");
  cmd->add_option("--weights", args->weights,
                  "Criterion weights (normalized to sum 1; unnamed ones weigh 0), default "
                  "latency=0.4,throughput=0.3,memory=0.2,cold_start=0.1");
  cmd->add_option("--model", args->model,
                  "Model to decide for when the results hold several (path, file name or stem)");
  cmd->add_option("--latency", args->latency,
                  "Latency statistic the latency criterion scores: p50, p90, p95, p99, max")
      ->capture_default_str();
  cmd->add_flag("--json", args->json, "Print the decision as JSON");
  return [args] { return run_select(*args); };
}

}  // namespace osprey::cli
