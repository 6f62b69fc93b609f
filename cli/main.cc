// The `osprey` command-line tool: subcommand dispatch and the one error-reporting path.
// Every failure prints exactly one line, "osprey: error: ...", on stderr and exits non-zero
// (2 for command-line usage errors, 1 for everything else).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "commands.h"

namespace {

void report_error(std::string message) {
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  while (!message.empty() && message.back() == ' ') message.pop_back();
  std::fprintf(stderr, "osprey: error: %s\n", message.c_str());
}

std::string status_message(const osprey::Status& s) {
  if (s.code() == osprey::StatusCode::kInternal) return "internal error: " + s.message();
  return s.message();
}

}  // namespace

// oneDNN (Debian's build) runs on OpenMP, and libgomp by default spins at every barrier for
// 300,000 pause instructions (~15 ms on this Xeon) before sleeping. When a core is shared with
// other work, 2-thread sessions then collapse (MobileNetV2 54 ms at 1 thread, 400-800 ms at 2 on
// a loaded 2-core machine), while a fully passive policy costs ~50% at 2 threads on an idle one
// (24 ms vs 12 ms). A bounded spin of 20,000 (~1 ms) keeps the idle-machine speed (11.7 ms) and
// bounds the damage under load; see docs/PERFORMANCE.md. libgomp reads the setting only once,
// before main(), so the tool re-executes itself once with GOMP_SPINCOUNT=20000 unless the user
// chose a policy (OMP_WAIT_POLICY or GOMP_SPINCOUNT).
static void bound_openmp_spin_waits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;
  if (setenv("GOMP_SPINCOUNT", "20000", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed (no /proc): carry on with the default policy, which is correct, only slower.
}

int main(int argc, char** argv) {
  bound_openmp_spin_waits(argv);
  CLI::App app{"Osprey: run, inspect, benchmark and serve ONNX models", "osprey"};
  app.set_version_flag("--version", std::string("osprey ") + OSPREY_VERSION);
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, osprey::cli::Action>> commands;
  auto add = [&](const char* name, osprey::cli::Action action) {
    commands.emplace_back(app.get_subcommand(name), std::move(action));
  };
  add("run", osprey::cli::add_run_command(app));
  add("inspect", osprey::cli::add_inspect_command(app));
  add("ops", osprey::cli::add_ops_command(app));
  add("bench", osprey::cli::add_bench_command(app));
  add("serve", osprey::cli::add_serve_command(app));
  add("select", osprey::cli::add_select_command(app));
  add("perf", osprey::cli::add_perf_command(app));
  add("bench-adapter", osprey::cli::add_bench_adapter_command(app));

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::string hint = " (see 'osprey --help')";
    for (const auto& [cmd, action] : commands)
      if (cmd->parsed()) hint = " (see 'osprey " + cmd->get_name() + " --help')";
    report_error(e.what() + hint);
    return 2;
  }
  try {
    for (const auto& [cmd, action] : commands) {
      if (!cmd->parsed()) continue;
      const osprey::Status s = action();
      if (s.ok()) return 0;
      report_error(status_message(s));
      return 1;
    }
  } catch (const std::bad_alloc&) {
    report_error("out of memory");
    return 1;
  } catch (const std::exception& e) {
    report_error(std::string("internal error: ") + e.what());
    return 1;
  }
  report_error("no subcommand chosen (see 'osprey --help')");
  return 2;
}
