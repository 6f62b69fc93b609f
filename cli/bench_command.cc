// `osprey bench MODEL`: in-process latency/throughput benchmark of one Session. With
// --frameworks, --out, several models or swept values it becomes the cross-framework comparison
// of bench_compare.cc instead.
//
// Protocol: load (timed), build inputs once (seeded random or files), --warmup untimed runs,
// then --iterations timed runs (or, with --duration-s, timed runs until that many seconds have
// passed). Each run is timed on its own with steady_clock; percentiles follow stats.h.
// Throughput = batch * timed runs / wall time of the timed phase. Peak RSS is VmHWM from
// /proc/self/status, in MiB (reported as peak_rss_mb).
//
// --profile times every node of every timed run (Session::run with a RunProfile; the latencies
// then include that small overhead) and prints per-op-type and top-node tables. --peak measures
// the fp32 FMA peak on the session's threads and the model's achieved GFLOP/s at p50, with FLOPs
// counted from the shapes of a profiled run (bench_peak.h). `osprey bench --peak` without MODEL
// prints the peak alone.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "bench_args.h"
#include "bench_peak.h"
#include "bench_sessions.h"
#include "commands.h"
#include "common.h"
#include "format.h"
#include "stats.h"

namespace osprey::cli {
namespace {

// Peak resident set size in MiB, or -1 if /proc/self/status is unavailable.
double peak_rss_mib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream is(line.substr(6));
      double kb = -1;
      is >> kb;
      return kb < 0 ? -1 : kb / 1024.0;
    }
  }
  return -1;
}

struct BenchResult {
  LatencySummary latency;
  double total_s = 0;
  double throughput = 0;
};

// Options that only the comparison mode understands; any of them selects it.
bool wants_comparison(const BenchArgs& args, const CLI::App* cmd) {
  for (const char* opt :
       {"--frameworks", "--out", "--affinity", "--shape-mode", "--inputs",
        "--python", "--peers-dir", "--reference", "--peer-timeout", "--peer-option",
        "--osprey-in-process", "--window", "--max-windows", "--stability-tolerance"})
    if (cmd->count(opt) > 0) return true;
  return args.models.size() > 1 || args.threads.size() > 1 || args.batches.size() > 1 ||
         args.precisions.size() > 1;
}

// --sessions N: the loaded session and N - 1 more of the same model, run concurrently.
Status bench_sessions(const BenchArgs& args, const LoadedModel& first, const SessionOptions& options,
                      const std::vector<PreparedInput>& prepared,
                      const std::vector<NamedTensor>& feeds) {
  std::vector<LoadedModel> more;
  std::vector<const Session*> sessions = {first.session.get()};
  for (int i = 1; i < args.sessions; ++i) {
    OSPREY_ASSIGN_OR_RETURN(LoadedModel m, load_model(args.models.front(), options));
    more.push_back(std::move(m));
    sessions.push_back(more.back().session.get());
  }
  OSPREY_ASSIGN_OR_RETURN(ConcurrentRuns runs,
                          run_sessions_concurrently(sessions, feeds, args.warmup, args.iterations,
                                                    args.duration_s));
  const LatencySummary l = summarize(runs.samples_ms);
  const double throughput =
      runs.wall_s > 0 ? static_cast<double>(args.batches.front()) *
                            static_cast<double>(runs.samples_ms.size()) / runs.wall_s
                      : 0;
  const int threads = first.session->options().threads;
  const double rss = peak_rss_mib();
  std::string per_session;
  for (double p : runs.session_p50_ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.3f", per_session.empty() ? "" : " ", p);
    per_session += buf;
  }
  if (args.json) {
    std::printf("{\"model\": %s, \"version\": %s, \"sessions\": %d, \"threads\": %d, "
                "\"batch\": %lld, \"iterations\": %zu, \"total_s\": %s, \"p50_ms\": %s, "
                "\"p90_ms\": %s, \"p99_ms\": %s, \"max_ms\": %s, \"mean_ms\": %s, "
                "\"throughput_per_s\": %s, \"session_p50_ms\": [%s], \"peak_rss_mb\": %s}\n",
                json_string(args.models.front()).c_str(), json_string(OSPREY_VERSION).c_str(),
                args.sessions, threads, static_cast<long long>(args.batches.front()), l.count,
                json_number(runs.wall_s).c_str(), json_number(l.p50).c_str(),
                json_number(l.p90).c_str(), json_number(l.p99).c_str(), json_number(l.max).c_str(),
                json_number(l.mean).c_str(), json_number(throughput).c_str(),
                [&] {
                  std::string a;
                  for (double p : runs.session_p50_ms) a += (a.empty() ? "" : ", ") + json_number(p);
                  return a;
                }().c_str(),
                rss < 0 ? "null" : json_number(rss).c_str());
    return Status::Ok();
  }
  std::printf("model:      %s\n", args.models.front().c_str());
  for (const auto& p : prepared)
    std::printf("input:      %s %s (%s)\n", p.name.c_str(),
                format_type(p.tensor.dtype(), p.tensor.shape()).c_str(), p.source.c_str());
  std::printf("sessions:   %d, run concurrently, each from its own thread with %d threads; batch %lld\n",
              args.sessions, threads, static_cast<long long>(args.batches.front()));
  std::printf("load:       %.2f ms (the first session)\n", first.load_ms);
  std::printf("runs:       %d warmup + %zu timed per session (%zu in all) in %.3f s\n",
              args.warmup, runs.samples_ms.size() / sessions.size(), l.count, runs.wall_s);
  std::printf("latency:    p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  min %.3f  max %.3f ms (all runs)\n",
              l.p50, l.p90, l.p95, l.p99, l.min, l.max);
  std::printf("            p50 per session: %s ms\n", per_session.c_str());
  std::printf("throughput: %.1f inferences/s (all sessions)\n", throughput);
  if (rss >= 0) std::printf("peak RSS:   %.1f MiB\n", rss);
  return Status::Ok();
}

Status bench_single(const BenchArgs& args, CLI::App* cmd) {
  const std::string& model = args.models.front();
  const int64_t batch = args.batches.front();
  OSPREY_ASSIGN_OR_RETURN(InputSpec spec, make_input_spec(args.in));
  spec.batch = batch;
  SessionOptions options;
  options.threads = args.threads.front();
  if (args.precisions.size() != 1)
    return invalid_argument("bench: one model runs at one --precision (fp32 or fast); give a "
                            "list only when comparing frameworks");
  options.precision = args.precisions.front() == "fast" ? Precision::kFast : Precision::kExact;
  options.batch_split = args.batch_split == "on"    ? BatchSplit::kOn
                        : args.batch_split == "off" ? BatchSplit::kOff
                                                    : BatchSplit::kAuto;
  options.blocked_layout = blocked_layout_of(args.blocked_layout);
  options.winograd = winograd_of(args.winograd);
  options.disabled_passes = args.disabled_passes;
  OSPREY_ASSIGN_OR_RETURN(LoadedModel m, load_model(model, options));
  const Session& session = *m.session;
  spec.generator.max_elements = session.options().max_tensor_elements;
  OSPREY_ASSIGN_OR_RETURN(std::vector<PreparedInput> prepared,
                          prepare_inputs(session.inputs(), spec));
  bool applied = false;
  for (const auto& p : prepared) applied |= p.batch_applied;
  if (cmd->count("--batch") > 0 && batch != 1 && !applied) {
    std::string decl;
    for (const auto& i : session.inputs())
      decl += (decl.empty() ? "" : ", ") + i.name + ": " + format_info(i);
    return invalid_argument("--batch ", batch,
                            ": no generated input has a symbolic first dimension (",
                            decl.empty() ? "no inputs" : decl, ")");
  }
  std::vector<NamedTensor> feeds;
  for (const auto& p : prepared) feeds.emplace_back(p.name, p.tensor);
  if (args.sessions > 1) return bench_sessions(args, m, options, prepared, feeds);

  for (int i = 0; i < args.warmup; ++i) {
    auto r = session.run(feeds);
    if (!r.ok())
      return run_failure(r.status(), prepared,
                         "run failed (warmup run " + std::to_string(i + 1) + ")");
  }
  ProfileAccumulator profiles;
  RunProfile profile;
  RunProfile* const profiling = args.profile ? &profile : nullptr;
  std::vector<double> samples;
  const auto phase_start = std::chrono::steady_clock::now();
  const bool timed = args.duration_s > 0;
  while (true) {
    if (timed ? (!samples.empty() && ms_since(phase_start) >= args.duration_s * 1000.0)
              : static_cast<int>(samples.size()) >= args.iterations)
      break;
    const auto start = std::chrono::steady_clock::now();
    auto r = session.run(feeds, profiling);
    samples.push_back(ms_since(start));
    if (!r.ok())
      return run_failure(r.status(), prepared,
                         "run failed (timed run " + std::to_string(samples.size()) + ")");
    if (profiling) profiles.add(profile);
  }
  BenchResult res;
  res.total_s = ms_since(phase_start) / 1000.0;
  res.latency = summarize(samples);
  res.throughput = res.total_s > 0 ? static_cast<double>(batch) *
                                         static_cast<double>(samples.size()) / res.total_s
                                   : 0;
  const double rss = peak_rss_mib();
  const int threads =
      session.options().threads > 0 ? session.options().threads : args.threads.front();
  const LatencySummary& l = res.latency;
  ModelPeak peak;
  if (args.peak) {
    if (!profiling) {  // one untimed profiled run for the shapes the FLOPs are counted from
      auto r = session.run(feeds, &profile);
      if (!r.ok()) return run_failure(r.status(), prepared, "run failed (profiled run for --peak)");
    }
    OSPREY_ASSIGN_OR_RETURN(PeakResult p, measure_peak(threads > 0 ? threads : 1));
    GraphFlops flops = count_flops(profile.nodes);  // per node times its runs
    const GraphFlops nested = count_flops(profile.subgraph_nodes);  // If, Loop, Scan bodies
    flops.flops += nested.flops;
    flops.counted_nodes += nested.counted_nodes;
    flops.unknown_nodes += nested.unknown_nodes;
    peak = model_peak(p, flops, l.p50);
    peak.winograd_nodes = static_cast<int>(session.optimization_marks().winograd_nodes);
  }
  const ProfileSummary prof = profiles.summary(
      args.profile_top > 0 ? static_cast<size_t>(args.profile_top) : std::numeric_limits<size_t>::max());

  if (args.json) {
    std::string j = "{";
    auto key = [&](const char* k, const std::string& v) {
      j += std::string(j.size() > 1 ? ", " : "") + json_string(k) + ": " + v;
    };
    key("model", json_string(model));
    key("version", json_string(OSPREY_VERSION));
    key("threads", std::to_string(threads));
    key("batch", std::to_string(batch));
    key("batch_split", json_string(session.batch_split_summary()));
    key("warmup", std::to_string(args.warmup));
    key("iterations", std::to_string(l.count));
    key("duration_s", json_number(args.duration_s));
    key("total_s", json_number(res.total_s));
    key("seed", std::to_string(spec.seed));
    key("load_ms", json_number(m.load_ms));
    key("p50_ms", json_number(l.p50));
    key("p90_ms", json_number(l.p90));
    key("p95_ms", json_number(l.p95));
    key("p99_ms", json_number(l.p99));
    key("min_ms", json_number(l.min));
    key("max_ms", json_number(l.max));
    key("mean_ms", json_number(l.mean));
    key("stdev_ms", json_number(l.stdev));
    key("throughput_per_s", json_number(res.throughput));
    key("peak_rss_mb", rss < 0 ? "null" : json_number(rss));
    std::string ins = "[";
    for (const auto& p : prepared) {
      ins += std::string(ins.size() > 1 ? ", " : "") + "{\"name\": " + json_string(p.name) +
             ", \"dtype\": " + json_string(dtype_name(p.tensor.dtype())) + ", \"shape\": [";
      for (size_t k = 0; k < p.tensor.shape().size(); ++k)
        ins += (k ? ", " : "") + std::to_string(p.tensor.shape()[k]);
      ins += "], \"source\": " + json_string(p.source) + "}";
    }
    key("inputs", ins + "]");
    if (args.peak) j += ", " + model_peak_json_fields(peak);
    if (args.profile) key("profile", profile_json(prof));
    std::printf("%s}\n", j.c_str());
    return Status::Ok();
  }
  std::printf("model:      %s\n", model.c_str());
  for (const auto& p : prepared)
    std::printf("input:      %s %s (%s)\n", p.name.c_str(),
                format_type(p.tensor.dtype(), p.tensor.shape()).c_str(), p.source.c_str());
  std::printf("threads:    %s   batch: %lld%s\n",
              threads > 0 ? std::to_string(threads).c_str() : "engine default",
              static_cast<long long>(batch),
              batch > 1 ? (" (" + session.batch_split_summary() + ")").c_str() : "");
  std::printf("load:       %.2f ms\n", m.load_ms);
  std::printf("runs:       %d warmup + %zu timed in %.3f s\n", args.warmup, l.count, res.total_s);
  std::printf("latency:    p50 %.3f  p90 %.3f  p95 %.3f  p99 %.3f  min %.3f  max %.3f ms\n", l.p50,
              l.p90, l.p95, l.p99, l.min, l.max);
  std::printf("            mean %.3f ms, stdev %.3f ms\n", l.mean, l.stdev);
  std::printf("throughput: %.1f inferences/s\n", res.throughput);
  if (rss >= 0) std::printf("peak RSS:   %.1f MiB\n", rss);
  if (args.peak) std::printf("%s", model_peak_text(peak).c_str());
  if (args.profile) {
    const RunMemoryStats& m = profile.memory;  // the last timed run
    std::printf("memory:     %s; arena %.2f MiB, %lld node outputs in it, %lld on the heap (%.2f MiB)\n",
                m.planned ? "planned" : "recording (no plan yet)", m.arena_bytes / 1048576.0,
                static_cast<long long>(m.arena_outputs), static_cast<long long>(m.heap_outputs),
                m.heap_output_bytes / 1048576.0);
    std::printf("\n%s", profile_text(prof).c_str());
  }
  return Status::Ok();
}

}  // namespace

Action add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Measure a model's latency and throughput in this process, or compare frameworks fairly "
      "(--frameworks osprey,onnxruntime,... --out DIR; see docs/BENCHMARKING.md)");
  cmd->add_option("MODEL", args->models,
                  "ONNX model file(s); several need --out. Required, except with --peak alone");
  add_input_options(cmd, &args->in);
  cmd->add_option(
         "-t,--threads", args->threads,
         "Worker threads (0 = engine default); a list (1,2,4) sweeps them in comparison mode")
      ->check(non_negative_integer())
      ->delimiter(',')
      ->allow_extra_args(false)
      ->default_str("0");
  cmd->add_option(
         "-b,--batch", args->batches,
         "First dim of generated inputs whose first dim is symbolic; counts toward throughput; a "
         "list (1,8) sweeps it")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->delimiter(',')
      ->allow_extra_args(false)
      ->default_str("1");
  cmd->add_option("-w,--warmup", args->warmup, "Untimed runs before measuring")
      ->check(CLI::Range(0, 1000000))
      ->capture_default_str();
  cmd->add_option("-n,--iterations", args->iterations, "Timed runs")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  cmd->add_option(
         "-d,--duration-s,--duration", args->duration_s,
         "Measure for this many seconds instead of a fixed number of runs (overrides --iterations)")
      ->check(CLI::Range(0.001, 86400.0));
  cmd->add_flag("--json", args->json,
                "Print exactly one JSON object instead of text (single-model mode)");
  cmd->add_flag("--peak", args->peak,
                "Measure the fp32 FMA peak GFLOP/s (AVX-512 or AVX2+FMA, chosen at run time) on "
                "--threads threads (without MODEL: 0 = 1 thread, the per-core peak); with MODEL, "
                "also its achieved GFLOP/s at p50 as a fraction of the peak on the session's "
                "threads (Conv/ConvTranspose/Gemm/MatMul FLOPs from a profiled run's shapes)");
  cmd->add_flag("--profile", args->profile,
                "Time every node of every timed run: ms per run, share and count per op type, "
                "and the slowest nodes (--profile-top; control-flow subgraphs count toward their "
                "parent node; latencies include the timing overhead)");
  cmd->add_option("--batch-split", args->batch_split,
                  "How a batch runs (single-model mode): auto (item by item for convolutional "
                  "graphs separable along the batch, but whole from the node on which their "
                  "weights dominate and the batch's activations fit the last-level cache; `osprey "
                  "inspect --optimized` lists where), on (item by item throughout whenever "
                  "separable) or off (the whole batch at once)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  add_blocked_layout_option(cmd, &args->blocked_layout);
  add_winograd_option(cmd, &args->winograd);
  add_disable_pass_option(cmd, &args->disabled_passes);
  cmd->add_option("--profile-top", args->profile_top,
                  "How many of the slowest nodes --profile lists (0 = every node)")
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--sessions", args->sessions,
                  "Load N sessions of the model and run them at the same time, each from its own "
                  "thread (--warmup and --iterations per session): latency over all runs, "
                  "throughput of all sessions together (single-model mode)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option(
         "--frameworks", args->frameworks,
         "Compare these frameworks, each in a process of its own (osprey through `osprey "
         "bench-adapter`, others through bench/peers/<name>.py), e.g. osprey,onnxruntime,openvino")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--out", args->out,
                  "Directory for results.csv, results.json, summary.md, inputs and outputs");
  cmd->add_option("--precision", args->precisions,
                  "fp32 and/or fast (each framework's safe reduced precision; Osprey's fast is "
                  "bf16 convolutions and matrix products). One value benches one model at it")
      ->check(CLI::IsMember({"fp32", "fast"}))
      ->delimiter(',')
      ->allow_extra_args(false)
      ->default_str("fp32");
  cmd->add_option("--affinity", args->affinity,
                  "Thread pinning: off and/or on; a list (off,on) sweeps it. on pins each "
                  "framework's worker threads to CPUs its own documented way; a framework "
                  "without a pinning API is reported unavailable for pinned cells")
      ->check(CLI::IsMember({"off", "on"}))
      ->delimiter(',')
      ->allow_extra_args(false)
      ->default_str("off");
  cmd->add_option("--shape-mode", args->shape_modes,
                  "dynamic (the model as given) and/or fixed (a copy whose graph inputs have "
                  "each cell's concrete shapes, written under --out/models); a list sweeps it")
      ->check(CLI::IsMember({"dynamic", "fixed"}))
      ->delimiter(',')
      ->allow_extra_args(false)
      ->default_str("dynamic");
  cmd->add_option("--inputs", args->inputs_dir,
                  "Directory of <input name>.npy files fed to every framework");
  cmd->add_option("--python", args->python,
                  "Python interpreter for peer adapters (default: <repo>/.venv/bin/python)");
  cmd->add_option("--peers-dir", args->peers_dir,
                  "Directory of peer adapters (default: <repo>/bench/peers)");
  cmd->add_option("--reference", args->reference,
                  "Framework whose outputs the others are compared with")
      ->capture_default_str();
  cmd->add_option("--peer-timeout", args->peer_timeout_s,
                  "Seconds a peer may take to answer one request")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  cmd->add_option("--window", args->window,
                  "Timed runs per measurement window (frameworks alternate by window)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--max-windows", args->max_windows, "Windows before giving up on stability")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--stability-tolerance", args->tolerance_pct,
                  "Percent: stable when the last 3 windows' p50 are within this of their mean")
      ->check(CLI::Range(0.01, 1000.0))
      ->capture_default_str();
  cmd->add_option("--peer-option", args->peer_options,
                  "An adapter option for one framework's load requests, e.g. "
                  "openvino:performance_hint=THROUGHPUT "
                  "(repeatable; see bench/peers/README.md)")
      ->type_name("FRAMEWORK:KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_flag("--osprey-in-process", args->osprey_in_process,
                "Measure osprey inside this process instead of its own adapter process (for "
                "debugging with one process, or where a child process cannot be started; its RSS "
                "then includes this process's)");
  return [args, cmd]() -> Status {
    if (cmd->count("--profile-top") && !args->profile)
      return invalid_argument("bench: --profile-top goes with --profile");
    if (args->models.empty()) {
      if (!args->peak)
        return invalid_argument("bench: MODEL is required (except with --peak alone)");
      if (args->profile) return invalid_argument("bench: --profile needs a MODEL");
      if (args->threads.size() > 1)
        return invalid_argument("bench --peak: give one --threads value, not a list");
      return bench_peak_only(*args);
    }
    if (args->sessions > 1 && (args->peak || args->profile || wants_comparison(*args, cmd)))
      return invalid_argument(
          "bench: --sessions runs one model's sessions concurrently; it does not combine with "
          "--peak, --profile or the comparison options");
    if (wants_comparison(*args, cmd)) {
      if (args->peak || args->profile)
        return invalid_argument(
            "bench: --peak and --profile are single-model options (one MODEL, one --threads and "
            "--batch value, no comparison options)");
      if (cmd->count("--batch-split"))
        return invalid_argument(
            "bench: --batch-split is a single-model option; a comparison runs Osprey as it loads "
            "by default (batch split auto)");
      if (cmd->count("--blocked-layout"))
        return invalid_argument(
            "bench: --blocked-layout is a single-model option; a comparison runs Osprey as it "
            "loads by default (blocked layout auto)");
      if (cmd->count("--winograd"))
        return invalid_argument(
            "bench: --winograd is a single-model option; a comparison runs Osprey as it loads by "
            "default (winograd auto)");
      if (cmd->count("--disable-pass"))
        return invalid_argument(
            "bench: --disable-pass is a single-model option; a comparison runs Osprey with every "
            "pass");
      return bench_compare(*args, cmd);
    }
    return bench_single(*args, cmd);
  };
}

}  // namespace osprey::cli
