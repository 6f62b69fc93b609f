// Subcommands of the `osprey` tool. Each add_*_command registers its options on `app` and
// returns the action main() runs when that subcommand is chosen. Actions report failure as a
// Status; main() prints it as the single "osprey: error: ..." line and exits non-zero.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

#include "osprey/status.h"

namespace osprey::cli {

using Action = std::function<Status()>;

Action add_run_command(CLI::App& app);
Action add_inspect_command(CLI::App& app);
Action add_bench_command(CLI::App& app);
Action add_serve_command(CLI::App& app);
Action add_select_command(CLI::App& app);
Action add_perf_command(CLI::App& app);
Action add_ops_command(CLI::App& app);
Action add_bench_adapter_command(CLI::App& app);  // internal: Osprey as a bench peer

}  // namespace osprey::cli
