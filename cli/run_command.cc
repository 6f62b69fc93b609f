// `osprey run MODEL`: run a model once on given or generated inputs, print a summary and
// optionally write every output to DIR/<name>.npy.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "args.h"
#include "commands.h"
#include "common.h"
#include "format.h"
#include "osprey/npy.h"

namespace osprey::cli {
namespace {

struct RunArgs {
  std::string model;
  InputArgs in;
  std::string output_dir;
  int threads = 0;
  int level = SessionOptions{}.optimization_level;
  std::string precision = "exact";
  std::string blocked_layout = "auto";
  std::string winograd = "auto";
  std::vector<std::string> disabled_passes;
};

// Writes `t` as DIR/stem.npy; returns the path written (with a note for bfloat16).
Result<std::string> write_output(const std::string& dir, const std::string& stem, const Tensor& t) {
  const std::string path = (std::filesystem::path(dir) / (stem + ".npy")).string();
  NpyWriteOptions wo;
  wo.bfloat16_as_float32 = true;
  OSPREY_RETURN_IF_ERROR(write_npy(path, t, wo));
  return t.dtype() == DType::kBFloat16 ? path + " (bfloat16 written as float32)" : path;
}

void print_tensor_line(const std::string& name, const Tensor& t, const std::string& note) {
  const std::string summary = value_summary(t);
  std::printf("  %s  %s%s%s%s\n", name.c_str(), format_type(t.dtype(), t.shape()).c_str(),
              summary.empty() ? "" : "  ", summary.c_str(), note.c_str());
}

Status run(const RunArgs& args) {
  OSPREY_ASSIGN_OR_RETURN(InputSpec spec, make_input_spec(args.in));
  SessionOptions options;
  options.threads = args.threads;
  options.optimization_level = args.level;
  options.precision = args.precision == "fast" ? Precision::kFast : Precision::kExact;
  options.blocked_layout = blocked_layout_of(args.blocked_layout);
  options.winograd = winograd_of(args.winograd);
  options.disabled_passes = args.disabled_passes;
  OSPREY_ASSIGN_OR_RETURN(LoadedModel m, load_model(args.model, options));
  const Session& session = *m.session;
  spec.generator.max_elements = session.options().max_tensor_elements;
  OSPREY_ASSIGN_OR_RETURN(std::vector<PreparedInput> prepared, prepare_inputs(session.inputs(), spec));

  if (!args.output_dir.empty()) OSPREY_RETURN_IF_ERROR(create_output_dir("--output-dir", args.output_dir));

  bool sequences = false;
  for (const auto& o : session.outputs()) sequences |= o.is_sequence;
  std::vector<NamedValue> outputs;
  const auto start = std::chrono::steady_clock::now();
  if (sequences) {
    std::vector<NamedValue> feeds;
    for (const auto& p : prepared) feeds.emplace_back(p.name, Value(p.tensor));
    auto result = session.run_values(feeds);
    if (!result.ok()) return run_failure(result.status(), prepared, "run failed");
    outputs = std::move(result).value();
  } else {
    std::vector<NamedTensor> feeds;
    for (const auto& p : prepared) feeds.emplace_back(p.name, p.tensor);
    auto result = session.run(feeds);
    if (!result.ok()) return run_failure(result.status(), prepared, "run failed");
    for (auto& [name, t] : *result) outputs.emplace_back(name, Value(std::move(t)));
  }
  const double run_ms = ms_since(start);

  std::vector<std::string> names;
  for (const auto& o : outputs) names.push_back(o.first);
  const std::vector<std::string> stems = safe_file_stems(names);

  std::printf("model: %s (loaded in %.2f ms)\n", args.model.c_str(), m.load_ms);
  std::printf("inputs:\n");
  for (const auto& p : prepared) print_tensor_line(p.name, p.tensor, "  (" + p.source + ")");
  std::printf("outputs:\n");
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, v] = outputs[i];
    if (v.is_tensor()) {
      std::string note;
      if (!args.output_dir.empty()) {
        OSPREY_ASSIGN_OR_RETURN(std::string path, write_output(args.output_dir, stems[i], v.tensor));
        note = "  -> " + path;
      }
      print_tensor_line(name, v.tensor, note);
    } else if (v.is_sequence()) {
      std::printf("  %s  sequence of %zu tensors\n", name.c_str(), v.sequence.size());
      for (size_t k = 0; k < v.sequence.size(); ++k) {
        std::string note;
        if (!args.output_dir.empty()) {
          OSPREY_ASSIGN_OR_RETURN(std::string path,
                                  write_output(args.output_dir, stems[i] + "." + std::to_string(k), v.sequence[k]));
          note = "  -> " + path;
        }
        print_tensor_line(name + "[" + std::to_string(k) + "]", v.sequence[k], note);
      }
    } else {
      std::printf("  %s  (none)\n", name.c_str());
    }
  }
  std::printf("time: %.3f ms\n", run_ms);
  return Status::Ok();
}

}  // namespace

Action add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a model once and summarize (and optionally save) its outputs");
  cmd->add_option("MODEL", args->model, "ONNX model file")->required();
  add_input_options(cmd, &args->in);
  cmd->add_option("-o,--output-dir", args->output_dir, "Write each output to DIR/<output name>.npy")
      ->type_name("DIR");
  cmd->add_option("-t,--threads", args->threads, "Worker threads (0 = engine default)")
      ->check(non_negative_integer())
      ->capture_default_str();
  cmd->add_option("-O,--optimization-level", args->level,
                  "Graph optimization level: 0 runs the graph as imported on the reference kernels, "
                  "1 adds clean-ups and folds, 2 fusions and layouts (3 = 2)")
      ->check(CLI::Range(0, 3))
      ->capture_default_str();
  add_precision_option(cmd, &args->precision);
  add_blocked_layout_option(cmd, &args->blocked_layout);
  add_winograd_option(cmd, &args->winograd);
  add_disable_pass_option(cmd, &args->disabled_passes);
  return [args] { return run(*args); };
}

}  // namespace osprey::cli
