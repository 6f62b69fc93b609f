// Options of `osprey bench`, shared by its two modes: the single-model in-process measurement
// (bench_command.cc) and the cross-framework comparison that writes reports (bench_compare.cc).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "common.h"
#include "osprey/status.h"

namespace osprey::cli {

struct BenchArgs {
  std::vector<std::string> models;
  InputArgs in;
  std::vector<int> threads = {0};
  std::vector<int64_t> batches = {1};
  int warmup = 10;
  int iterations = 50;
  double duration_s = 0;
  bool json = false;
  // Single-model mode (and --peak alone, without MODEL).
  bool peak = false;     // measure the fp32 FMA peak; with MODEL, achieved GFLOP/s vs it
  bool profile = false;  // per-op timing over the timed runs
  int profile_top = 15;  // slowest nodes --profile lists (0 = all)
  std::string batch_split = "auto";  // SessionOptions::batch_split: auto | on | off
  std::string blocked_layout = "auto";  // SessionOptions::blocked_layout: auto | on | off
  std::string winograd = "auto";        // SessionOptions::winograd: auto | on | off
  std::vector<std::string> disabled_passes;  // SessionOptions::disabled_passes
  int sessions = 1;      // sessions of the model run concurrently, each from its own thread
  // Comparison mode.
  std::vector<std::string> frameworks;
  std::vector<std::string> precisions = {"fp32"};
  std::vector<std::string> affinity = {"off"};        // "off" | "on": SessionOptions::pin_threads
  std::vector<std::string> shape_modes = {"dynamic"};  // "dynamic" | "fixed"
  std::string inputs_dir;
  std::string out;
  std::string python;
  std::string peers_dir;
  std::string reference = "osprey";
  double peer_timeout_s = 600;
  int window = 20;
  int max_windows = 30;
  double tolerance_pct = 10;
  std::vector<std::string> peer_options;  // FRAMEWORK:KEY=VALUE
  // Measure osprey inside the orchestrator instead of `osprey bench-adapter` (debugging, or
  // where a child process cannot be started).
  bool osprey_in_process = false;
};

// The comparison: every model x shape set x batch x shape mode x threads x affinity x precision,
// for every framework,
// reports written to args.out. `cmd` tells which options were given explicitly.
Status bench_compare(const BenchArgs& args, const CLI::App* cmd);

}  // namespace osprey::cli
