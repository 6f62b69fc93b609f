// Per-model version lifecycle: which versions serve, loading in the background, reloads that
// keep serving, failed loads that keep the previous version, and unloads that drain.
// Pure logic over an injected loader (a fake one in tests) and clock; no files, no sockets.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/types.h"
#include "core/backend.h"
#include "core/repository.h"
#include "osprey/status.h"
#include "scheduler/clock.h"

namespace osprey::server {

// A loaded, warmed version taking requests.
class ServedVersion {
 public:
  virtual ~ServedVersion() = default;
  // Stops taking requests and returns once every request already taken has been answered.
  virtual void drain() = 0;
};

// Loads and warms one version (called on a background thread).
using VersionLoader = std::function<Result<std::shared_ptr<ServedVersion>>(const VersionSource&)>;
// Told about every finished load attempt (for the load-duration metric).
using LoadObserver =
    std::function<void(const std::string& model, int64_t version, double seconds, const Status&)>;
// Told, with no lifecycle lock held, after anything that can change which versions are ready:
// a version became ready or stopped being ready, an operation (load, unload) ended. It may
// call back into the lifecycle's queries (is_ready, index, ...).
using StateObserver = std::function<void()>;

class ModelLifecycle {
 public:
  ModelLifecycle(VersionLoader loader, const scheduler::Clock* clock, LoadObserver observer = {},
                 StateObserver on_state_change = {});
  ~ModelLifecycle();  // = shutdown()
  ModelLifecycle(const ModelLifecycle&) = delete;
  ModelLifecycle& operator=(const ModelLifecycle&) = delete;

  // Brings the model to what `scan` and its version policy ask for, in the background: new or
  // changed versions load (and warm) while the old ones keep serving, then take over; versions
  // no longer wanted drain and unload. A failed load leaves what was serving in place and puts
  // the reason in the index. `retry` reloads versions whose last load failed even if their files
  // did not change (explicit load); poll passes false. The future holds the first error.
  std::shared_future<Status> apply(ScannedModel scan, bool retry);
  // Drains and unloads every version of the model, in the background.
  std::shared_future<Status> unload(const std::string& model);
  // Unloads everything and joins the background threads. Idempotent.
  void shutdown();

  // Runs `fn` with the version to serve (version 0 = the highest READY one) while holding a
  // lock that keeps it from being swapped out or drained: requests submitted inside `fn` are
  // answered even if a reload or unload starts at once. kNotFound for an unknown model or
  // version, kUnavailable when it is known but not ready. `fn` must not block.
  Status with_version(const std::string& model, int64_t version,
                      const std::function<void(ServedVersion&, int64_t version)>& fn) const;
  // The version's object (for metadata), same rules as with_version.
  Result<std::shared_ptr<ServedVersion>> find(const std::string& model, int64_t version) const;

  std::vector<RepositoryEntry> index(bool ready_only) const;
  std::vector<std::string> models() const;                      // every model ever seen
  std::vector<int64_t> ready_versions(const std::string& model) const;  // ascending
  bool is_ready(const std::string& model, int64_t version) const;      // 0 = any version

 private:
  struct Slot {
    std::string state = "UNAVAILABLE";
    std::string reason;
    std::shared_ptr<ServedVersion> current;
    std::string fingerprint;         // of `current`
    std::string failed_fingerprint;  // of the last failed attempt
  };
  struct Model {
    std::mutex op_mu;  // one operation at a time per model
    // The rest is guarded by ModelLifecycle::mu_.
    ScannedModel desired;
    bool want_loaded = false;
    bool retry = false;
    std::string reason;  // model-level: config error, nothing to serve, unloaded
    std::map<int64_t, Slot> slots;
  };

  Model& model_entry(const std::string& name);  // caller holds mu_ exclusively
  std::shared_future<Status> start(Model* m);
  Status run_operation(Model* m);
  Status sync_versions(Model* m, const ScannedModel& scan, bool retry);
  Status load_version(Model* m, const ScannedModel& scan, const ScannedVersion& v, bool retry);
  void unload_version(Model* m, int64_t version, const std::string& reason);
  const Slot* serving_slot(const Model& m, int64_t version, int64_t* chosen, Status* why) const;
  void state_changed() const;  // caller holds no lock of ours

  VersionLoader loader_;
  const scheduler::Clock* clock_;
  LoadObserver observer_;
  StateObserver on_state_change_;

  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<Model>> models_;
  bool shut_down_ = false;

  std::mutex threads_mu_;
  std::vector<std::thread> threads_;
};

}  // namespace osprey::server
