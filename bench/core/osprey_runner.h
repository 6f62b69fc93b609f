// Osprey measured in this process, behind the same interface as the peers: Session::load with
// the cell's thread count, inputs read from the same .npy files, each run timed with
// steady_clock around Session::run only.
//
// Precision: SessionOptions has no reduced-precision setting in this build, so "fast" is
// refused with kUnimplemented ("not supported by this build") and reported as such.
// Affinity: pin_threads sets SessionOptions::pin_threads, and a pinned session is loaded and
// run from a CallThread of its own, so the pinned OpenMP workers it leaves behind are never the
// ones an unpinned session runs on.
// Where it runs: `osprey bench` wraps it in `osprey bench-adapter`, a process of its own spoken
// to through PeerProcess like every peer (AdapterServer, adapter_server.h), unless
// --osprey-in-process puts it in the orchestrator. RSS is this process's VmRSS / VmHWM, so only
// in the adapter process is it Osprey's alone; in the orchestrator it includes every model and
// report loaded so far.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/call_thread.h"
#include "core/runner.h"
#include "osprey/session.h"

namespace osprey::bench {

// The process an OspreyRunner lives in, which its settings and notes report.
enum class OspreyPlacement {
  kBenchmarkProcess,  // inside the `osprey bench` orchestrator (--osprey-in-process)
  kAdapterProcess,    // inside `osprey bench-adapter`, a child process of its own
};

class OspreyRunner final : public FrameworkRunner {
 public:
  OspreyRunner(std::string version, OspreyPlacement placement);
  const std::string& name() const override { return name_; }
  bool in_process() const override { return placement_ == OspreyPlacement::kBenchmarkProcess; }
  Result<HelloReply> hello() override;
  Result<LoadReply> load(const LoadRequest& req) override;
  Result<RunReply> run(const std::string& inputs_dir, int iterations, int warmup) override;
  Result<std::vector<std::string>> outputs(const std::string& inputs_dir,
                                           const std::string& out_dir) override;

 private:
  Result<std::vector<NamedTensor>> read_inputs(const std::string& inputs_dir) const;
  Result<RunReply> run_here(const std::string& inputs_dir, int iterations, int warmup);
  Result<std::vector<std::string>> outputs_here(const std::string& inputs_dir,
                                                const std::string& out_dir);
  // Runs fn where the loaded session runs: on pinned_thread_ for a pinned session, else here.
  template <class T>
  T on_session_thread(const std::function<T()>& fn);

  std::string name_ = "osprey";
  std::string version_;
  OspreyPlacement placement_;
  std::unique_ptr<Session> session_;
  bool pinned_ = false;
  std::unique_ptr<CallThread> pinned_thread_;  // made by the first pinned load
};

// VmRSS and VmHWM of this process in bytes (-1 when /proc is unavailable).
int64_t current_rss_bytes();
int64_t peak_rss_bytes();

}  // namespace osprey::bench
