// A Server with canned models for the gRPC front-end tests. Inference completes on the fake's
// own worker thread (like the real server), after an optional per-request delay taken from
// the request parameter "delay_ms", so tests can make later requests finish first.
//
// Models:
//   echo     ready, version "1": every input comes back as output "echo_<input>", unchanged.
//   echo_inline  the same, answered inside infer_async (no thread hop; for latency benches).
//   fail     ready: inference fails with kInternal "backend exploded".
//   busy     ready: infer_async refuses at once with kUnavailable "queue full".
//   loading  known but not ready.
// Anything else is kNotFound. load/unload: "echo"/"fail" succeed, "locked" is
// kFailedPrecondition, others kNotFound.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/server.h"

namespace osprey::server::testing {

class FakeServer final : public Server {
 public:
  FakeServer();
  explicit FakeServer(const ServerLimits& limits);
  ~FakeServer() override;

  std::atomic<bool> is_ready{true};
  std::atomic<int> infer_calls{0};

  std::vector<std::string> loaded() const;
  std::vector<std::string> unloaded() const;
  ModelLoadOptions last_load_options() const;

  bool live() const override { return true; }
  bool ready() const override { return is_ready; }
  ServerMetadata metadata() const override;
  const ServerLimits& limits() const override { return limits_; }
  Result<ModelMetadata> model_metadata(const std::string& model,
                                       const std::string& version) const override;
  Result<bool> model_ready(const std::string& model, const std::string& version) const override;
  Status model_config(const std::string& model, const std::string& version,
                      inference::ModelConfig* out) const override;
  void infer_async(InferRequest request, InferCallback done) override;
  std::vector<RepositoryEntry> repository_index(bool ready_only) const override;
  Status load_model(const std::string& model) override;
  Status load_model(const std::string& model, const ModelLoadOptions& options) override;
  Status unload_model(const std::string& model) override;
  Result<std::vector<ModelStats>> statistics(const std::string& model,
                                             const std::string& version) const override;
  std::string prometheus_metrics() const override { return ""; }
  void shutdown() override {}

 private:
  struct Task {
    std::chrono::steady_clock::time_point due;
    std::function<void()> run;
  };
  void schedule(std::chrono::milliseconds delay, std::function<void()> run);
  void worker();

  ServerLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::string> loaded_, unloaded_;
  ModelLoadOptions last_load_options_;
  std::thread thread_;
};

}  // namespace osprey::server::testing
