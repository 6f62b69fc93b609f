// `osprey bench-adapter` (internal, not listed in `osprey --help`): Osprey as a peer adapter.
// `osprey bench --frameworks osprey,...` starts it as a child process, as it starts
// bench/peers/<name>.py for every other framework, and speaks the JSON-lines peer protocol of
// docs/BENCHMARKING.md to it on stdin/stdout, so Osprey's latencies and RSS are measured in a
// process of its own. The protocol is bench::AdapterServer's; this file only sets up the
// streams: answers go to the original stdout, and file descriptor 1 is pointed at stderr so
// nothing else (a library's printf) can reach the protocol stream.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "commands.h"
#include "core/adapter_server.h"
#include "core/osprey_runner.h"

namespace osprey::cli {

Action add_bench_adapter_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "bench-adapter",
      "Internal: serve the peer-adapter protocol on stdin/stdout for `osprey bench`");
  cmd->group("");  // hidden from the subcommand list
  return []() -> Status {
    // An orchestrator that has gone is a write error, not a signal.
    signal(SIGPIPE, SIG_IGN);
    std::fflush(stdout);
    std::cout.flush();
    const int answers = fcntl(1, F_DUPFD_CLOEXEC, 3);
    if (answers < 0)
      return internal_error("bench-adapter: cannot duplicate stdout: ", std::strerror(errno));
    if (dup2(2, 1) < 0) {
      close(answers);
      return internal_error("bench-adapter: cannot point stdout at stderr: ", std::strerror(errno));
    }
    bench::OspreyRunner runner(OSPREY_VERSION, bench::OspreyPlacement::kAdapterProcess);
    const Status s = bench::serve_adapter(runner, std::cin, answers);
    close(answers);
    return s;
  };
}

}  // namespace osprey::cli
