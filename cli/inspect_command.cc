// `osprey inspect MODEL`: what a model declares and contains.
#include <algorithm>
#include <cstdio>
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
};

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
  OSPREY_ASSIGN_OR_RETURN(LoadedModel m, load_model(args.model, options));
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
  }
  return Status::Ok();
}

}  // namespace

Action add_inspect_command(CLI::App& app) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a model's metadata, inputs, outputs, ops and parameter size");
  cmd->add_option("MODEL", args->model, "ONNX model file")->required();
  cmd->add_flag("--optimized", args->optimized, "Also print the graph as it runs, after optimization passes");
  cmd->add_option("-O,--optimization-level", args->level, "Optimization level for --optimized (0 = as imported)")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  add_precision_option(cmd, &args->precision);
  add_blocked_layout_option(cmd, &args->blocked_layout);
  add_winograd_option(cmd, &args->winograd);
  add_disable_pass_option(cmd, &args->disabled_passes);
  return [args] { return inspect(*args); };
}

}  // namespace osprey::cli
