// A Server with canned models, for front-end tests. Inference runs on its own worker thread, so
// callbacks arrive from a non-I/O thread as with the real server.
//   identity   (versions 1, 2): each input INPUTk comes back as OUTPUTk, same type and bytes
//   loading    known but never ready
//   busy       infer -> kUnavailable;   broken  infer -> kInternal
//   gated      infer answers only once `gate` requests are pending together (or after 10 s)
//   slow       infer answers after 300 ms
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/server.h"

namespace osprey::server::testing {

class FakeServer : public Server {
 public:
  FakeServer();
  ~FakeServer() override;

  bool live() const override { return live_; }
  bool ready() const override { return ready_; }
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
  Status unload_model(const std::string& model) override;
  Result<std::vector<ModelStats>> statistics(const std::string& model,
                                             const std::string& version) const override;
  std::string prometheus_metrics() const override;
  void shutdown() override {}

  std::atomic<bool> live_{true};
  std::atomic<bool> ready_{true};
  ServerLimits limits_;
  int gate = 16;
  std::atomic<int> max_gated_pending{0};
  std::vector<std::string> load_calls;  // "load:m" / "unload:m"
  InferRequest last_request;            // the last request the worker saw

 private:
  struct Job {
    InferRequest request;
    InferCallback done;
  };
  void worker();
  Status check_model(const std::string& model, const std::string& version) const;

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::vector<Job> gated_;
  bool stop_ = false;
  std::thread worker_;
  std::vector<std::thread> sleepers_;
};

Result<InferResponse> identity(const InferRequest& request);

}  // namespace osprey::server::testing
