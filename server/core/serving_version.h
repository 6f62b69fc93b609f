// One loaded version taking requests: the backend's instances behind a BatchQueue (dynamic
// batching per the config, or every request alone on a free instance), with statistics.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "api/server.h"
#include "core/backend.h"
#include "core/model_lifecycle.h"
#include "core/model_stats.h"
#include "core/request_validator.h"
#include "core/version_observer.h"
#include "scheduler/batch_queue.h"

namespace osprey::server {

// The batcher settings for a config: its dynamic_batching block, or, without one, max batch 0
// (each request runs alone). `server_max_queue_size` caps the queue when the config sets none.
scheduler::BatcherConfig batcher_config(const inference::ModelConfig& config,
                                        int64_t server_max_queue_size);

class ServingVersion : public ServedVersion {
 public:
  // `observer` may be null. `clock` must outlive this object.
  ServingVersion(std::string model, int64_t version, std::unique_ptr<LoadedModel> loaded,
                 int64_t server_max_queue_size, const scheduler::Clock* clock,
                 std::unique_ptr<VersionObserver> observer);
  ~ServingVersion() override;

  const std::string& model() const { return model_; }
  int64_t version() const { return version_; }
  const inference::ModelConfig& config() const { return loaded_->config(); }
  ModelStats stats() const { return stats_.snapshot(model_, std::to_string(version_)); }
  // Answers a request that failed before it could be queued (counted as a failure).
  void record_failure(const std::string& reason, uint64_t request_ns);

  // Queues a validated request. `start_ns` = when the server received it (steady clock).
  // On error the callback is not called and the caller answers.
  Status submit(InferRequest request, const RequestShape& shape, Server::InferCallback done,
                uint64_t start_ns);
  void drain() override;

 private:
  struct Job {
    InferRequest request;
    Server::InferCallback done;
    int64_t batch_size = 1;
    uint64_t start_ns = 0;
    uint64_t enqueue_ns = 0;
  };
  void execute(int instance, std::vector<uint64_t> ids);
  void reject(uint64_t id, Status why);

  std::string model_;
  int64_t version_;
  std::unique_ptr<LoadedModel> loaded_;
  const scheduler::Clock* clock_;
  std::unique_ptr<VersionObserver> observer_;
  VersionStats stats_;
  std::mutex mu_;
  std::map<uint64_t, Job> jobs_;
  uint64_t next_id_ = 1;
  std::unique_ptr<scheduler::BatchQueue> queue_;
};

uint64_t steady_now_ns();

}  // namespace osprey::server
