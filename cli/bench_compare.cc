// `osprey bench MODEL... --frameworks osprey,onnxruntime,... --out DIR`: the fair
// cross-framework comparison (docs/BENCHMARKING.md). This file turns the options into cells
// with identical input files, starts one runner per framework and writes the reports; the
// protocol itself lives in the osprey_bench library (bench/core/).
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "args.h"
#include "bench_args.h"
#include "core/environment.h"
#include "core/fixed_shape_model.h"
#include "core/orchestrator.h"
#include "core/osprey_runner.h"
#include "core/peer_process.h"
#include "core/reports.h"
#include "core/schedule.h"
#include "format.h"
#include "osprey/npy.h"
#include "report/html_report.h"

namespace osprey::cli {
namespace {
namespace fs = std::filesystem;
using bench::BenchReport;

struct ShapeSet {
  std::string label = "default";
  std::vector<std::pair<std::string, Shape>> shapes;
};

std::string dims_text(const Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) t += 'x';
    t += std::to_string(s[i]);
  }
  return t;
}

// --shape values -> shape sets: a name given k times defines k sets (its i-th value goes to set
// i); names given once apply to every set. Names given more than once must agree on k.
Result<std::vector<ShapeSet>> shape_sets(const std::vector<std::string>& values) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<Shape>> by_name;
  for (const auto& v : values) {
    OSPREY_ASSIGN_OR_RETURN(auto kv, parse_assignment(v, "--shape"));
    OSPREY_ASSIGN_OR_RETURN(Shape s, parse_dims(kv.second));
    if (!by_name.count(kv.first)) order.push_back(kv.first);
    by_name[kv.first].push_back(s);
  }
  size_t k = 1;
  for (const auto& [name, list] : by_name) {
    if (list.size() == 1) continue;
    if (k != 1 && list.size() != k)
      return invalid_argument(
          "--shape: inputs swept together must be given the same number of times (", name, " has ",
          list.size(), ", another input has ", k, ")");
    k = list.size();
  }
  std::vector<ShapeSet> sets(k);
  if (values.empty()) return sets;
  for (size_t i = 0; i < k; ++i) {
    sets[i].label.clear();
    for (const auto& name : order) {
      const auto& list = by_name[name];
      const Shape& s = list.size() == 1 ? list[0] : list[i];
      sets[i].shapes.emplace_back(name, s);
      sets[i].label += (sets[i].label.empty() ? "" : " ") + name + "=" + dims_text(s);
    }
  }
  return sets;
}

Status check_framework_names(const std::vector<std::string>& names) {
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& n = names[i];
    if (n.empty() ||
        n.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos)
      return invalid_argument("--frameworks: '", n,
                              "' is not a framework name (lowercase letters, digits, '_')");
    for (size_t j = 0; j < i; ++j)
      if (names[j] == n) return invalid_argument("--frameworks: '", n, "' is listed twice");
  }
  return Status::Ok();
}

// --affinity / --shape-mode values: each at most once (CLI11 checks the names).
Status check_sweep_values(const std::vector<std::string>& values, const char* option) {
  if (values.empty()) return invalid_argument(option, ": give at least one value");
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (values[i] == values[j])
        return invalid_argument(option, ": '", values[i], "' is listed twice");
  return Status::Ok();
}

// What one (model, shape set, batch) group gives its cells: the input files and, for fixed
// shape-mode cells, the model file to load.
struct CellGroup {
  std::string model;
  std::string label;
  std::string inputs_dir;
  std::vector<bench::InputDesc> inputs;
  bench::FixedShapeModel fixed;  // path empty unless --shape-mode includes fixed
};

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Input files given with --inputs DIR: every <name>.npy there that names a model input.
std::vector<std::pair<std::string, std::string>> files_in_dir(
    const std::string& dir, const std::vector<TensorInfo>& declared) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& info : declared) {
    const std::string p = dir + "/" + info.name + ".npy";
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) files.emplace_back(info.name, p);
  }
  return files;
}

// Writes the inputs of one (model, shape set, batch) group and returns their descriptions.
Result<std::vector<bench::InputDesc>> write_inputs(const Session& session, const BenchArgs& args,
                                                   const ShapeSet& set, int64_t batch,
                                                   const std::string& dir) {
  OSPREY_ASSIGN_OR_RETURN(InputSpec spec, make_input_spec(args.in));
  spec.shapes = set.shapes;
  spec.batch = batch;
  spec.generator.max_elements = session.options().max_tensor_elements;
  if (!args.inputs_dir.empty()) {
    auto more = files_in_dir(args.inputs_dir, session.inputs());
    if (more.empty())
      return not_found("--inputs ", args.inputs_dir,
                       ": no <input name>.npy file for any model input");
    for (auto& f : more) {
      bool given = false;
      for (const auto& g : spec.files) given |= g.first == f.first;
      if (!given) spec.files.push_back(std::move(f));
    }
  }
  OSPREY_ASSIGN_OR_RETURN(std::vector<PreparedInput> prepared,
                          prepare_inputs(session.inputs(), spec));
  bool applied = false;
  for (const auto& p : prepared) applied |= p.batch_applied;
  if (batch != 1 && !applied)
    return invalid_argument("--batch ", batch,
                            ": no generated input has a symbolic first dimension");
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create ", dir, ": ", ec.message());
  std::vector<bench::InputDesc> descs;
  for (const auto& p : prepared) {
    if (p.name.find('/') != std::string::npos || p.name == "." || p.name == "..")
      return invalid_argument("input name '", p.name,
                              "' cannot be a file name, so peers cannot be given it");
    OSPREY_RETURN_IF_ERROR(write_npy(dir + "/" + p.name + ".npy", p.tensor));
    descs.push_back({p.name, p.tensor.dtype(), p.tensor.shape(), p.source});
  }
  return descs;
}

// --peer-option FRAMEWORK:KEY=VALUE... -> framework -> JSON object of string values.
Result<std::map<std::string, std::string>> peer_options_json(
    const std::vector<std::string>& values, const std::vector<std::string>& frameworks) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_fw;
  for (const auto& v : values) {
    const auto colon = v.find(':');
    if (colon == std::string::npos || colon == 0)
      return invalid_argument("--peer-option '", v, "': expected FRAMEWORK:KEY=VALUE");
    const std::string fw = v.substr(0, colon);
    OSPREY_ASSIGN_OR_RETURN(auto kv, parse_assignment(v.substr(colon + 1), "--peer-option"));
    bool listed = false;
    for (const auto& f : frameworks) listed |= f == fw;
    if (!listed)
      return invalid_argument("--peer-option '", v, "': ", fw, " is not in --frameworks");
    if (fw == "osprey")
      return invalid_argument("--peer-option '", v, "': osprey takes no adapter options");
    by_fw[fw].push_back(kv);
  }
  std::map<std::string, std::string> out;
  for (const auto& [fw, kvs] : by_fw) {
    std::string j = "{";
    for (size_t i = 0; i < kvs.size(); ++i)
      j += (i ? "," : "") + json_string(kvs[i].first) + ":" + json_string(kvs[i].second);
    out[fw] = j + "}";
  }
  return out;
}

bool has_file_inputs(const BenchArgs& args) {
  return !args.in.inputs.empty() || !args.inputs_dir.empty();
}

// Inputs exactly as given in files (--input NAME=FILE, every *.npy in --inputs DIR), for a model
// whose declared inputs Osprey cannot read.
Result<std::vector<bench::InputDesc>> copy_file_inputs(const BenchArgs& args,
                                                       const std::string& dir) {
  OSPREY_ASSIGN_OR_RETURN(auto files, parse_input_options(args.in.inputs));
  if (!args.inputs_dir.empty()) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(args.inputs_dir, ec)) {
      if (e.path().extension() != ".npy") continue;
      const std::string name = e.path().stem().string();
      bool given = false;
      for (const auto& f : files) given |= f.first == name;
      if (!given) files.emplace_back(name, e.path().string());
    }
    if (ec) return not_found("--inputs ", args.inputs_dir, ": ", ec.message());
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return invalid_argument("cannot create ", dir, ": ", ec.message());
  std::vector<bench::InputDesc> descs;
  for (const auto& [name, path] : files) {
    OSPREY_ASSIGN_OR_RETURN(Tensor t, read_npy(path));
    OSPREY_RETURN_IF_ERROR(write_npy(dir + "/" + name + ".npy", t));
    descs.push_back({name, t.dtype(), t.shape(), "file " + path});
  }
  return descs;
}

// This binary, which runs Osprey's adapter (`osprey bench-adapter`) in a child process.
Result<std::string> own_executable() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return unavailable(
        "cannot find the osprey binary to start its adapter process (/proc/self/exe: ",
        ec.message(), "); --osprey-in-process measures osprey in this process");
  return self.string();
}

}  // namespace

Status bench_compare(const BenchArgs& args, const CLI::App* cmd) {
  if (args.out.empty())
    return invalid_argument(
        "--out DIR is required to compare frameworks or sweep settings (reports go there)");
  if (args.json)
    return invalid_argument(
        "--json is for the single-model mode; a comparison writes results.json into --out");
  std::vector<std::string> frameworks =
      args.frameworks.empty() ? std::vector<std::string>{"osprey"} : args.frameworks;
  OSPREY_RETURN_IF_ERROR(check_framework_names(frameworks));
  // Without --threads every framework gets what the affinity mask and cgroup quota allow
  // (Osprey's resolved default), stated in the report.
  std::vector<int> threads = cmd->count("--threads") > 0 ? args.threads : std::vector<int>{};
  for (int t : threads)
    if (t < 1)
      return invalid_argument(
          "--threads: give thread counts >= 1 so every framework gets the same number");
  OSPREY_ASSIGN_OR_RETURN(std::vector<ShapeSet> sets, shape_sets(args.in.shapes));
  OSPREY_ASSIGN_OR_RETURN(auto load_options, peer_options_json(args.peer_options, frameworks));
  OSPREY_RETURN_IF_ERROR(check_sweep_values(args.affinity, "--affinity"));
  OSPREY_RETURN_IF_ERROR(check_sweep_values(args.shape_modes, "--shape-mode"));
  bool wants_fixed = false;
  for (const auto& m : args.shape_modes) wants_fixed |= m == "fixed";

  BenchReport report;
  report.osprey_version = OSPREY_VERSION;
  report.started_at = now_utc();
  bench::BenchSettings& st = report.settings;
  st.frameworks = frameworks;
  st.batches = args.batches;
  st.precisions = args.precisions;
  st.affinity = args.affinity;
  st.shape_modes = args.shape_modes;
  for (const auto& s : sets) st.shape_sets.push_back(s.label);
  st.warmup = args.warmup;
  st.plan.window_iterations = args.window;
  st.plan.max_windows = args.max_windows;
  st.plan.stability.tolerance = args.tolerance_pct / 100.0;
  if (cmd->count("--duration-s") > 0) {
    st.plan.mode = bench::MeasureMode::kDuration;
    st.plan.duration_s = args.duration_s;
  } else if (cmd->count("--iterations") > 0) {
    st.plan.mode = bench::MeasureMode::kIterations;
    st.plan.iterations = args.iterations;
  }
  OSPREY_RETURN_IF_ERROR(bench::validate_plan(st.plan));
  st.seed = args.in.seed;
  st.input_source =
      (args.in.inputs.empty() && args.inputs_dir.empty() ? "random " : "files + random ") +
      args.in.distribution;
  st.reference = args.reference;
  st.python =
      args.python.empty() ? std::string(OSPREY_SOURCE_DIR) + "/.venv/bin/python" : args.python;
  st.peers_dir =
      args.peers_dir.empty() ? std::string(OSPREY_SOURCE_DIR) + "/bench/peers" : args.peers_dir;
  st.peer_timeout_s = args.peer_timeout_s;
  st.peer_options = args.peer_options;

  std::error_code ec;
  const std::string out = fs::absolute(args.out, ec).lexically_normal().string();
  fs::create_directories(out, ec);
  if (ec) return invalid_argument("cannot create --out directory ", args.out, ": ", ec.message());

  std::map<std::tuple<size_t, size_t, int64_t>, CellGroup> groups;
  for (size_t mi = 0; mi < args.models.size(); ++mi) {
    const std::string model = fs::absolute(args.models[mi], ec).lexically_normal().string();
    st.models.push_back(model);
    SessionOptions probe_options;
    probe_options.threads = threads.empty() ? 0 : 1;
    // The model's declared inputs come from Osprey's loader. When Osprey cannot load the model,
    // inputs given as files still let the other frameworks run (Osprey's rows then say why).
    auto probe = load_model(model, probe_options);
    if (!probe.ok() && !has_file_inputs(args))
      return probe.status().with_context(
          "reading the model's declared inputs (to benchmark other frameworks on a model Osprey "
          "cannot load, "
          "give every input as a file with --inputs DIR or --input NAME=FILE.npy)");
    if (!probe.ok() &&
        (sets.size() > 1 || !sets[0].shapes.empty() || args.batches != std::vector<int64_t>{1}))
      return invalid_argument(
          model, ": Osprey cannot load it (", probe.status().message(),
          "), so inputs come from files as they are: --shape and --batch sweeps are not possible");
    if (threads.empty())
      threads.push_back(probe.ok() ? std::max(1, probe->session->options().threads)
                                   : std::max(1, bench::capture_environment(1).affinity_count));
    st.threads = threads;
    for (size_t si = 0; si < sets.size(); ++si) {
      for (int64_t batch : args.batches) {
        const std::string group =
            "m" + std::to_string(mi) + "_s" + std::to_string(si) + "_b" + std::to_string(batch);
        CellGroup g;
        g.model = model;
        g.label = sets[si].label;
        g.inputs_dir = out + "/inputs/" + group;
        auto descs = probe.ok() ? write_inputs(*probe->session, args, sets[si], batch, g.inputs_dir)
                                : copy_file_inputs(args, g.inputs_dir);
        if (!descs.ok()) return descs.status().with_context(model);
        g.inputs = std::move(descs).value();
        if (wants_fixed) {
          fs::create_directories(out + "/models", ec);
          if (ec) return invalid_argument("cannot create ", out, "/models: ", ec.message());
          OSPREY_ASSIGN_OR_RETURN(
              g.fixed, bench::write_fixed_shape_model(model, g.inputs,
                                                      out + "/models/" + group + "_fixed.onnx"));
        }
        groups[{mi, si, batch}] = std::move(g);
      }
    }
  }

  bench::CellAxes axes;
  axes.models = args.models.size();
  axes.shape_sets = sets.size();
  axes.batches = args.batches;
  axes.shape_modes = args.shape_modes;
  axes.threads = threads;
  axes.pinned.clear();
  for (const auto& a : args.affinity) axes.pinned.push_back(a == "on");
  axes.precisions = args.precisions;
  for (const bench::CellCoord& coord : bench::make_cell_grid(axes)) {
    const CellGroup& g = groups.at({coord.model, coord.shape_set, coord.batch});
    bench::Cell c;
    c.id = bench::cell_id(coord);
    c.model = g.model;
    c.shape_label = g.label;
    c.batch = coord.batch;
    c.shape_mode = coord.shape_mode;
    if (coord.shape_mode == "fixed") {
      c.model_file = g.fixed.path;
      c.setup_note = g.fixed.note;
    }
    c.threads = coord.threads;
    c.pinned = coord.pinned;
    c.precision = coord.precision;
    c.inputs = g.inputs;
    c.inputs_dir = g.inputs_dir;
    report.cells.push_back(std::move(c));
  }

  std::vector<std::unique_ptr<bench::FrameworkRunner>> owned;
  std::vector<bench::FrameworkRunner*> runners;
  for (const auto& name : frameworks) {
    if (name == "osprey" && args.osprey_in_process) {
      owned.push_back(std::make_unique<bench::OspreyRunner>(
          OSPREY_VERSION, bench::OspreyPlacement::kBenchmarkProcess));
    } else {
      bench::PeerOptions po;
      po.timeout_s = args.peer_timeout_s;
      if (name == "osprey") {
        OSPREY_ASSIGN_OR_RETURN(std::string self, own_executable());
        po.command = {self, "bench-adapter"};
      } else {
        po.python = st.python;
        po.script = st.peers_dir + "/" + name + ".py";
      }
      owned.push_back(std::make_unique<bench::PeerProcess>(name, po));
    }
    runners.push_back(owned.back().get());
  }
  int max_threads = 1;
  for (int t : threads) max_threads = std::max(max_threads, t);
  report.environment = bench::capture_environment(max_threads);
  for (const auto& w : report.environment.warnings)
    std::fprintf(stderr, "osprey bench: warning: %s\n", w.c_str());

  bench::OrchestratorOptions oo;
  oo.warmup = args.warmup;
  oo.plan = st.plan;
  oo.reference = args.reference;
  oo.work_dir = out;
  oo.load_options_json = load_options;
  auto progress = bench::ProgressBar::for_stderr(report.cells.size());
  const auto start = std::chrono::steady_clock::now();
  OSPREY_RETURN_IF_ERROR(bench::run_benchmark(runners, oo, &report, &progress));
  report.wall_s = ms_since(start) / 1000.0;
  for (auto* r : runners) r->quit();
  OSPREY_RETURN_IF_ERROR(bench::write_reports(report, out));
  OSPREY_RETURN_IF_ERROR(bench::write_html_report(report, out));

  for (const auto& m : report.measurements) {
    const bench::Cell& c = report.cells[m.cell];
    if (m.status == bench::CellStatus::kOk)
      std::printf("%-28s %-12s p50 %9.3f ms  p99 %9.3f ms  %10.1f items/s%s\n", c.id.c_str(),
                  m.framework.c_str(), m.summary.p50, m.summary.p99, m.throughput,
                  m.stable ? "" : "  (not stable)");
    else
      std::printf("%-28s %-12s %s: %s\n", c.id.c_str(), m.framework.c_str(),
                  bench::cell_status_name(m.status), m.reason.c_str());
  }
  std::printf("reports: %s/results.csv, %s/results.json, %s/summary.md, %s/report.html\n",
              out.c_str(), out.c_str(), out.c_str(), out.c_str());
  return Status::Ok();
}

}  // namespace osprey::cli
