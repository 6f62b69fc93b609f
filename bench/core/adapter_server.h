// The adapter side of the peer protocol (docs/BENCHMARKING.md), for a FrameworkRunner written
// in C++: one JSON request line in, one JSON answer line out, exactly as the Python adapters
// answer (bench/peers/adapter_common.py, `handle`): the same commands (hello, load, run,
// outputs, quit), the same field checks and limits, and a failure as {"ok":false,"error":...}
// after which the adapter keeps serving. `osprey bench-adapter` serves an OspreyRunner with it,
// so the orchestrator measures Osprey through PeerProcess in a process of its own, like a peer.
//
// A runner's own failure (Osprey's Status) is answered with its message as it is.
#pragma once

#include <istream>
#include <optional>
#include <string>

#include "core/runner.h"
#include "osprey/status.h"

namespace osprey::bench {

// Limits of a request, the Python adapters' (adapter_common.py).
inline constexpr int64_t kAdapterMaxIterations = 1'000'000;
inline constexpr int64_t kAdapterMaxThreads = 1024;
inline constexpr int64_t kAdapterMaxDim = int64_t{1} << 31;

struct AdapterAnswer {
  std::string line;   // one JSON object, without the newline
  bool quit = false;  // the request was quit: answer, then stop serving
};

class AdapterServer {
 public:
  explicit AdapterServer(FrameworkRunner& runner) { state_.runner = &runner; }

  // Answers one request line (never throws; bad input is an ok:false answer).
  AdapterAnswer handle_line(const std::string& line);

  // What the commands share (adapter_server.cc).
  struct State {
    FrameworkRunner* runner = nullptr;
    std::optional<HelloReply> hello;    // the runner's hello, asked once
    std::optional<LoadRequest> loaded;  // the request of the model loaded, if any
  };

 private:
  State state_;
};

// Serves request lines from `in` until quit or end of input, writing each answer and a newline
// to file descriptor `out_fd`. Blank lines are skipped. Fails only when an answer cannot be
// written (the orchestrator has gone).
Status serve_adapter(FrameworkRunner& runner, std::istream& in, int out_fd);

}  // namespace osprey::bench
