// A peer framework in its own process: `<python> -u <peers_dir>/<framework>.py`, or any adapter
// command line (Osprey's own is `<osprey binary> bench-adapter`), spoken to over pipes with one
// JSON object per line each way (docs/BENCHMARKING.md has the protocol).
//
// Every request has a deadline: a peer that does not answer in time is killed, one that exits
// or answers something that is not a protocol reply is reported with the tail of its stderr,
// so a hung or broken adapter never hangs or crashes the run. After such a failure the process
// is gone; the next load() starts a fresh one (and says hello again).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/runner.h"

namespace osprey::bench {

struct PeerOptions {
  std::string python;  // interpreter
  std::string script;  // adapter file
  // When not empty, the adapter is started as this argv instead (command[0] an executable
  // file, run without a shell); python and script are then unused.
  std::vector<std::string> command;
  double timeout_s = 600;  // per request
  size_t stderr_tail_bytes = 2000;
  size_t max_reply_bytes = size_t{256} << 20;
};

class PeerProcess final : public FrameworkRunner {
 public:
  PeerProcess(std::string framework, PeerOptions options);
  ~PeerProcess() override;
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;

  const std::string& name() const override { return name_; }
  Result<HelloReply> hello() override;
  Result<LoadReply> load(const LoadRequest& req) override;
  Result<RunReply> run(const std::string& inputs_dir, int iterations, int warmup) override;
  Result<std::vector<std::string>> outputs(const std::string& inputs_dir,
                                           const std::string& out_dir) override;
  void quit() override;

  bool running() const { return pid_ > 0; }
  // The last bytes the peer wrote to stderr.
  const std::string& stderr_tail() const { return stderr_tail_; }

  // Sends one request line and returns the reply line (raw), or an error. Public for tests.
  Result<std::string> request(const std::string& cmd, const std::string& json_line);

 private:
  Status start();
  void stop_hard();
  void drain_stderr();
  std::string failure_context() const;

  std::string name_;
  PeerOptions options_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1;
  std::string stdout_buf_;
  std::string stderr_tail_;
};

}  // namespace osprey::bench
