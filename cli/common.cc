#include "common.h"

#include <chrono>
#include <filesystem>

#include "args.h"

namespace osprey::cli {

void add_precision_option(CLI::App* cmd, std::string* precision) {
  cmd->add_option("--precision", *precision,
                  "exact (float32) or fast (bf16 convolutions and matrix products with float32 "
                  "accumulation; needs avx512_bf16 or AMX)")
      ->check(CLI::IsMember({"exact", "fast"}))
      ->capture_default_str();
}

namespace {
// An auto | on | off option (SessionOptions' three-way policies), auto by default.
void add_auto_on_off_option(CLI::App* cmd, const char* name, std::string* value, const char* help) {
  cmd->add_option(name, *value, help)->check(CLI::IsMember({"auto", "on", "off"}))->capture_default_str();
}
// The policy `value` names: kOn, kOff, or kAuto for "auto".
template <class Policy>
Policy policy_of(const std::string& value) {
  return value == "on" ? Policy::kOn : value == "off" ? Policy::kOff : Policy::kAuto;
}
}  // namespace

void add_blocked_layout_option(CLI::App* cmd, std::string* layout) {
  add_auto_on_off_option(cmd, "--blocked-layout", layout,
                         "Chains of convolutions in oneDNN's blocked nChw8c layout: auto (on CPUs "
                         "without AVX-512, for regions large enough to pay), on (every eligible "
                         "region) or off (channels-last only)");
}

BlockedLayout blocked_layout_of(const std::string& layout) {
  return policy_of<BlockedLayout>(layout);
}

void add_winograd_option(CLI::App* cmd, std::string* winograd) {
  add_auto_on_off_option(cmd, "--winograd", winograd,
                         "float32 3x3 stride-1 convolutions with a Winograd algorithm (our own "
                         "over channels-last tensors on AVX-512, else oneDNN's where it offers one): "
                         "auto (64 or more input and output channels, output of 14x14 or more, 7x7 "
                         "on CPUs that run 512-bit FMAs in halves), on (every eligible one) or off "
                         "(direct only)");
}

Status create_output_dir(const std::string& option, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    return invalid_argument(option, " ", dir, ": cannot create directory", ec ? ": " + ec.message() : "");
  return Status::Ok();
}

Winograd winograd_of(const std::string& winograd) {
  return policy_of<Winograd>(winograd);
}

void add_disable_pass_option(CLI::App* cmd, std::vector<std::string>* passes) {
  cmd->add_option("--disable-pass", *passes,
                  "An optimization pass not to run, by name (repeatable; e.g. "
                  "qkv_projection_merge): to compare a model with and without it")
      ->take_all();
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos)
          return "must be a non-negative integer, not '" + value + "'";
        return "";
      },
      "");
}

void add_input_options(CLI::App* cmd, InputArgs* args) {
  cmd->add_option("-i,--input", args->inputs,
                  "Feed input NAME from a .npy file (repeatable); inputs not given get seeded random data")
      ->type_name("NAME=FILE.npy")
      ->allow_extra_args(false);
  cmd->add_option("-s,--shape", args->shapes,
                  "Shape of a generated input, e.g. images=1x3x224x224 (repeatable); non-fixed dims "
                  "without one default to 1")
      ->type_name("NAME=DIMS")
      ->allow_extra_args(false);
  cmd->add_option("--seed", args->seed, "Seed for generated inputs")
      ->check(non_negative_integer())
      ->capture_default_str();
  cmd->add_option("--random", args->distribution, "Distribution of generated float inputs: uniform in [-1,1) or normal N(0,1); integers are uniform in [0,100), bools fair coins")
      ->check(CLI::IsMember({"uniform", "normal"}))
      ->capture_default_str();
}

Result<InputSpec> make_input_spec(const InputArgs& args) {
  InputSpec spec;
  OSPREY_ASSIGN_OR_RETURN(spec.files, parse_input_options(args.inputs));
  OSPREY_ASSIGN_OR_RETURN(spec.shapes, parse_shape_options(args.shapes));
  spec.seed = args.seed;
  if (!parse_distribution(args.distribution, &spec.generator.distribution))
    return invalid_argument("--random must be 'uniform' or 'normal', not '", args.distribution, "'");
  return spec;
}

Status run_failure(const Status& status, const std::vector<PreparedInput>& inputs, const std::string& what) {
  std::string random;
  for (const auto& in : inputs)
    if (in.source.rfind("random", 0) == 0) random += (random.empty() ? "" : ", ") + in.name;
  std::string message = what + ": " + status.message();
  if (!random.empty())
    message += " (generated random data for " + random + "; give real data with --input NAME=FILE.npy)";
  return Status(status.code(), message);
}

double ms_since(const std::chrono::steady_clock::time_point& start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

Result<LoadedModel> load_model(const std::string& path, const SessionOptions& options) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return not_found(path, ": no such file");
  if (std::filesystem::is_directory(st)) return invalid_argument(path, ": is a directory, not an ONNX model file");
  LoadedModel m;
  const auto start = std::chrono::steady_clock::now();
  auto session = Session::load(path, options);
  m.load_ms = ms_since(start);
  if (!session.ok()) return session.status().with_context("cannot load model");
  m.session = std::move(session).value();
  return m;
}

}  // namespace osprey::cli
