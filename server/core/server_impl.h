// The Server (server/api/server.h) over the repository, the version lifecycle, a backend and
// per-version batch queues. Server::create builds one with the Osprey engine backend.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "api/server.h"
#include "core/backend.h"
#include "core/config_override.h"
#include "core/model_lifecycle.h"
#include "core/server_metrics.h"
#include "scheduler/clock.h"

namespace osprey::server {

class ServerImpl : public Server {
 public:
  // Scans the repository and loads per the control mode; `backend` runs the models.
  static Result<std::unique_ptr<ServerImpl>> create(const ServerOptions& options,
                                                    std::unique_ptr<Backend> backend);
  ~ServerImpl() override;

  bool live() const override { return !shut_down_; }
  bool ready() const override;
  ServerMetadata metadata() const override;
  const ServerLimits& limits() const override { return options_.limits; }
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
  std::string prometheus_metrics() const override;
  void shutdown() override;

  // One rescan of the repository (what the poll thread does every repository_poll_secs):
  // added or changed models (re)load, removed ones unload. Waits for the loads to finish.
  Status poll_once();

 private:
  ServerImpl(const ServerOptions& options, std::unique_ptr<Backend> backend,
             std::unique_ptr<ServerMetrics> metrics);
  Result<std::shared_ptr<ServedVersion>> load_version(const VersionSource& source);
  Status startup();
  Result<int64_t> parse_version(const std::string& model, const std::string& version) const;
  void poll_loop();
  Status load_with_files(const std::string& model, const ModelLoadOptions& options,
                         const inference::ModelConfig& config);
  // Drops the model's override directories except `keep` (nullptr: all).
  void forget_override_dirs(const std::string& model, const OverrideDirectory* keep);

  ServerOptions options_;
  int thread_budget_ = 1;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ServerMetrics> metrics_;
  scheduler::SystemClock clock_;
  std::unique_ptr<ModelLifecycle> lifecycle_;
  std::set<std::string> startup_models_;
  std::atomic<bool> shutting_down_{false};
  std::atomic<bool> shut_down_{false};

  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  std::mutex applied_mu_;
  std::map<std::string, std::string> applied_;  // model -> what was last applied (poll mode)
  std::thread poll_thread_;

  // Directories of loads that sent their files, per model: the newest may be serving; older
  // ones go when a later load of the model succeeds.
  std::mutex override_dirs_mu_;
  std::map<std::string, std::vector<std::shared_ptr<OverrideDirectory>>> override_dirs_;
};

}  // namespace osprey::server
