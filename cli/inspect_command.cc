// `osprey inspect MODEL`: what a model declares and contains.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "commands.h"
#include "common.h"
#include "format.h"

namespace osprey::cli {
namespace {

struct InspectArgs {
  std::string model;
  bool optimized = false;
  int level = SessionOptions{}.optimization_level;
  std::string precision = "exact";
  std::string blocked_layout = "auto";
  std::string winograd = "auto";
  std::vector<std::string> disabled_passes;
  bool passes = false;
  std::string dump_dir;
  InputArgs in;
};

// Writes the graph before and after each pass that changed it to dir/NN-pass.{before,after}.txt
// (NN: the pass's place among those that ran): the callback SessionOptions::pass_dump calls.
class PassDumps {
 public:
  explicit PassDumps(std::string dir) : dir_(std::move(dir)) {}
  void operator()(const std::string& pass, const std::string& stage, const std::string& graph) {
    if (stage == "before") {
      ++index_;
      before_ = graph;
      return;
    }
    if (graph == before_ || !status_.ok()) return;
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%02d-", index_);
    for (const auto& [suffix, text] : {std::pair<const char*, const std::string*>{".before.txt", &before_}, {".after.txt", &graph}}) {
      const std::string path = (std::filesystem::path(dir_) / (prefix + pass + suffix)).string();
      std::ofstream out(path, std::ios::binary);
      out << *text;
      if (!out) status_ = invalid_argument("--dump-passes: cannot write ", path);
    }
    ++written_;
  }
  const Status& status() const { return status_; }
  int written() const { return written_; }

 private:
  std::string dir_, before_;
  int index_ = 0, written_ = 0;
  Status status_;
};

void print_load_report(const LoadReport& r, double load_ms) {
  std::printf("\nload: %.1f ms (import %.1f, optimize %.1f, prepare %.1f)\n", load_ms, r.import_ms,
              r.optimize_ms, r.prepare_ms);
  std::printf("passes:%s\n", r.passes.empty() ? " (none ran)" : "");
  size_t width = 4;
  for (const auto& p : r.passes) width = std::max(width, p.name.size());
  if (!r.passes.empty())
    std::printf("  %3s  %-*s  %-7s  %-13s  %s\n", "#", static_cast<int>(width), "pass", "changed",
                "nodes", "ms");
  int i = 0;
  for (const auto& p : r.passes) {
    const std::string nodes = std::to_string(p.nodes_before) + " -> " + std::to_string(p.nodes_after);
    std::printf("  %3d  %-*s  %-7s  %-13s  %.3f\n", ++i, static_cast<int>(width), p.name.c_str(),
                p.changed ? "yes" : "no", nodes.c_str(), p.ms);
  }
}

// One run's planned memory: the model runs twice on the input options' tensors (the first run
// records the plan, the second follows it). A model that cannot run on them is reported by
// print_memory_plan, not an error of inspect.
Result<std::string> memory_plan(const Session& s, const InputArgs& in) {
  OSPREY_ASSIGN_OR_RETURN(InputSpec spec, make_input_spec(in));
  spec.generator.max_elements = s.options().max_tensor_elements;
  OSPREY_ASSIGN_OR_RETURN(std::vector<PreparedInput> prepared, prepare_inputs(s.inputs(), spec));
  std::vector<NamedTensor> feeds;
  std::string shapes;
  for (const auto& p : prepared) {
    feeds.emplace_back(p.name, p.tensor);
    shapes += (shapes.empty() ? "" : ", ") + p.name + " " + format_type(p.tensor.dtype(), p.tensor.shape());
  }
  RunProfile profile;
  for (int i = 0; i < 2; ++i) {
    auto r = s.run(feeds, &profile);
    if (!r.ok()) return r.status().with_context("the run on " + shapes + " failed");
  }
  const RunMemoryStats& m = profile.memory;
  char line[256];
  std::snprintf(line, sizeof line, "%s; arena %.2f MiB, %lld node outputs in it, %lld on the heap (%.2f MiB)",
                m.planned ? "planned" : "not planned", m.arena_bytes / 1048576.0,
                static_cast<long long>(m.arena_outputs), static_cast<long long>(m.heap_outputs),
                m.heap_output_bytes / 1048576.0);
  return "(" + shapes + "): " + line;
}

void print_memory_plan(const Session& s, const InputArgs& in) {
  const auto plan = memory_plan(s, in);
  if (plan.ok()) std::printf("memory plan %s\n", plan->c_str());
  else std::printf("memory plan: not measured (%s)\n", plan.status().message().c_str());
}

void print_infos(const char* title, const std::vector<TensorInfo>& infos) {
  std::printf("%s:%s\n", title, infos.empty() ? " (none)" : "");
  for (const auto& i : infos) std::printf("  %s: %s\n", i.name.c_str(), format_info(i).c_str());
}

Status inspect(const InspectArgs& args) {
  SessionOptions options;
  options.optimization_level = args.level;
  options.precision = args.precision == "fast" ? Precision::kFast : Precision::kExact;
  options.blocked_layout = blocked_layout_of(args.blocked_layout);
  options.winograd = winograd_of(args.winograd);
  options.disabled_passes = args.disabled_passes;
  auto dumps = std::make_shared<PassDumps>(args.dump_dir);
  if (!args.dump_dir.empty()) {
    OSPREY_RETURN_IF_ERROR(create_output_dir("--dump-passes", args.dump_dir));
    options.pass_dump = [dumps](const std::string& pass, const std::string& stage,
                                const std::string& graph) { (*dumps)(pass, stage, graph); };
  }
  OSPREY_ASSIGN_OR_RETURN(LoadedModel m, load_model(args.model, options));
  OSPREY_RETURN_IF_ERROR(dumps->status());
  const Session& s = *m.session;
  const ModelStats& st = s.stats();
  std::printf("model: %s\n", args.model.c_str());
  std::printf("ir_version: %lld\n", static_cast<long long>(st.ir_version));
  std::printf("producer: %s\n", st.producer.empty() ? "(unknown)" : st.producer.c_str());
  std::printf("opsets:");
  for (size_t i = 0; i < st.opsets.size(); ++i)
    std::printf("%s %s %lld", i ? "," : "", st.opsets[i].first.empty() ? "ai.onnx" : st.opsets[i].first.c_str(),
                static_cast<long long>(st.opsets[i].second));
  std::printf("%s\n", st.opsets.empty() ? " (none)" : "");
  print_infos("inputs", s.inputs());
  print_infos("outputs", s.outputs());
  std::printf("nodes: %lld\n", static_cast<long long>(st.node_count));
  std::printf("parameters: %lld (%s)\n", static_cast<long long>(st.parameter_count),
              format_bytes(static_cast<double>(st.parameter_bytes)).c_str());
  auto ops = st.op_histogram;
  std::sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  size_t width = 0;
  for (const auto& [op, n] : ops) width = std::max(width, op.size());
  std::printf("ops:%s\n", ops.empty() ? " (none)" : "");
  for (const auto& [op, n] : ops) std::printf("  %-*s %d\n", static_cast<int>(width), op.c_str(), n);
  if (args.optimized) {
    std::printf("\noptimized graph (optimization level %d, precision %s):\n%s", args.level,
                args.precision.c_str(), s.graph_dump().c_str());
    std::printf("batches: %s\n", s.batch_split_summary().c_str());
    print_memory_plan(s, args.in);
  }
  if (args.passes) print_load_report(s.load_report(), m.load_ms);
  if (!args.dump_dir.empty())
    std::printf("pass dumps: %d passes changed the graph; before and after of each in %s\n",
                dumps->written(), args.dump_dir.c_str());
  return Status::Ok();
}

}  // namespace

Action add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's metadata, inputs, outputs, ops and parameter size");
  cmd->add_option("MODEL", args->model, "ONNX model file")->required();
  cmd->add_flag("--optimized", args->optimized,
                "Also print the graph as it runs, after optimization passes, and the memory plan's "
                "arena (the model runs twice on generated inputs; --shape for symbolic dims)");
  cmd->add_option("-O,--optimization-level", args->level, "Optimization level for --optimized (0 = as imported)")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  add_precision_option(cmd, &args->precision);
  add_blocked_layout_option(cmd, &args->blocked_layout);
  add_winograd_option(cmd, &args->winograd);
  add_disable_pass_option(cmd, &args->disabled_passes);
  cmd->add_flag("--passes", args->passes,
                "Also print the load's time (import, optimize, prepare) and each optimization pass "
                "that ran: whether it changed the graph, its node count before and after, its time");
  cmd->add_option("--dump-passes", args->dump_dir,
                  "Write the graph before and after each pass that changed it to "
                  "DIR/NN-PASS.before.txt and .after.txt (NN: the pass's place in the order run)");
  add_input_options(cmd, &args->in);
  return [args] { return inspect(*args); };
}

}  // namespace osprey::cli
