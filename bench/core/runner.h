// One framework under test, behind the peer-adapter protocol (docs/BENCHMARKING.md):
// hello, load, run, outputs. PeerProcess speaks it to an adapter process; OspreyRunner
// implements it in this process with the engine's Session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/report.h"
#include "osprey/status.h"

namespace osprey::bench {

struct HelloReply {
  std::string framework;
  std::string version;
  bool available = false;
  std::string reason;
  // Whether load honours pin_threads; the note says how it pins, or why it cannot.
  bool pins_threads = false;
  std::string pin_threads_note;
};

struct LoadRequest {
  std::string model;  // absolute path
  int threads = 1;
  bool pin_threads = false;  // pin worker threads to CPUs (only sent to runners that pin)
  std::string precision = "fp32";
  int64_t batch = 1;
  std::vector<InputDesc> inputs;
  std::string work_dir;  // where an adapter may write converted models
  std::string options_json = "{}";
};

struct LoadReply {
  double load_ms = 0;
  std::string settings_json = "{}";  // a JSON object
  std::string precision_used;
  std::string notes;
};

struct RunReply {
  std::vector<double> latencies_us;
  int64_t rss_bytes = -1;
  int64_t peak_rss_bytes = -1;
};

class FrameworkRunner {
 public:
  virtual ~FrameworkRunner() = default;
  virtual const std::string& name() const = 0;
  virtual bool in_process() const { return false; }
  virtual Result<HelloReply> hello() = 0;
  // Loads `req.model`, replacing any model loaded before.
  virtual Result<LoadReply> load(const LoadRequest& req) = 0;
  // `warmup` untimed then `iterations` timed runs on <inputs_dir>/<input>.npy.
  virtual Result<RunReply> run(const std::string& inputs_dir, int iterations, int warmup) = 0;
  // Writes every output as <out_dir>/<output name>.npy; returns the output names.
  virtual Result<std::vector<std::string>> outputs(const std::string& inputs_dir,
                                                   const std::string& out_dir) = 0;
  virtual void quit() {}
};

}  // namespace osprey::bench
