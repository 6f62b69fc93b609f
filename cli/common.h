// Pieces shared by the subcommands: model loading and the input options (--input, --shape,
// --seed, --random) that run and bench both take.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inputs.h"
#include "osprey/session.h"

namespace osprey::cli {

struct InputArgs {
  std::vector<std::string> inputs;  // NAME=FILE.npy
  std::vector<std::string> shapes;  // NAME=DIMS
  uint64_t seed = 0;
  std::string distribution = "uniform";
};

// Validator for counts and seeds: digits only, with a short error message.
CLI::Validator non_negative_integer();

// Adds --precision exact|fast (SessionOptions::precision) to `cmd`, bound to `precision`.
void add_precision_option(CLI::App* cmd, std::string* precision);
// --blocked-layout auto | on | off (SessionOptions::blocked_layout), and its value.
void add_blocked_layout_option(CLI::App* cmd, std::string* layout);
BlockedLayout blocked_layout_of(const std::string& layout);
// --winograd auto | on | off (SessionOptions::winograd), and its value.
void add_winograd_option(CLI::App* cmd, std::string* winograd);
// --disable-pass NAME (repeatable): SessionOptions::disabled_passes.
void add_disable_pass_option(CLI::App* cmd, std::vector<std::string>* passes);
Winograd winograd_of(const std::string& winograd);

// Adds --input, --shape, --seed and --random to `cmd`, bound to `args`.
void add_input_options(CLI::App* cmd, InputArgs* args);
// Parses the values bound by add_input_options.
Result<InputSpec> make_input_spec(const InputArgs& args);

struct LoadedModel {
  std::unique_ptr<Session> session;
  double load_ms = 0;
};
// Loads a model, refusing missing paths and directories with a clear message.
Result<LoadedModel> load_model(const std::string& path, const SessionOptions& options);

// `status` from Session::run, prefixed with `what`; when some inputs were generated, adds a
// hint that random data may be invalid for the model (indices, shapes) and how to give real data.
Status run_failure(const Status& status, const std::vector<PreparedInput>& inputs, const std::string& what);

// Creates `dir` (and its parents) for an output option such as --output-dir, or says which
// option's directory could not be made.
Status create_output_dir(const std::string& option, const std::string& dir);

// Milliseconds elapsed since `start` (std::chrono::steady_clock).
double ms_since(const std::chrono::steady_clock::time_point& start);

}  // namespace osprey::cli
