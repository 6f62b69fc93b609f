// What front ends may use: the server's whole surface, independent of any wire protocol.
// HTTP and gRPC front ends include only this header (and types.h / the generated config
// proto); they never reach into the repository, scheduler or backends.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/health_events.h"
#include "api/load_options.h"
#include "api/types.h"
#include "osprey/status.h"

namespace inference {
class ModelConfig;  // Triton's model configuration message (server/proto/model_config.proto)
}

namespace osprey::server {

enum class ModelControlMode { kNone, kPoll, kExplicit };

// Explicit limits; a request over any of them is refused with a 4xx naming the limit.
struct ServerLimits {
  int64_t max_request_bytes = int64_t{256} << 20;      // whole HTTP body / gRPC message
  int64_t max_tensor_elements = int64_t{1} << 28;      // per tensor, before allocating
  int64_t max_queue_size = 1024;                       // per model, unless its config says
};

struct ServerOptions {
  std::string model_repository;
  ModelControlMode control_mode = ModelControlMode::kNone;
  int repository_poll_secs = 15;
  std::vector<std::string> startup_models;  // --load-model (explicit mode); "*" = all
  ServerLimits limits;
  int total_threads = 0;  // engine threads shared by all instances; 0 = what the CPU quota allows
  std::string server_name = "osprey";
  std::string server_version;
};

class Server {
 public:
  virtual ~Server() = default;

  // Scans the repository and starts loading models per the control mode. Returns once the
  // startup models have loaded (or failed: a failed model is reported, not fatal).
  static Result<std::unique_ptr<Server>> create(const ServerOptions& options);

  virtual bool live() const = 0;
  virtual bool ready() const = 0;  // live, not shutting down, and every startup model ready
  virtual ServerMetadata metadata() const = 0;
  virtual const ServerLimits& limits() const = 0;

  // version "" = the latest ready version. Unknown model/version -> kNotFound.
  virtual Result<ModelMetadata> model_metadata(const std::string& model,
                                               const std::string& version) const = 0;
  virtual Result<bool> model_ready(const std::string& model, const std::string& version) const = 0;
  virtual Status model_config(const std::string& model, const std::string& version,
                              inference::ModelConfig* out) const = 0;

  // Queues a request; `done` is called exactly once, from a server thread, with the response
  // or an error: kInvalidArgument (bad input: 400), kNotFound (404), kUnavailable (queue full,
  // not ready, shutting down: 503), kInternal (500). Never blocks on inference.
  using InferCallback = std::function<void(Result<InferResponse>)>;
  virtual void infer_async(InferRequest request, InferCallback done) = 0;
  // Blocking convenience over infer_async.
  Result<InferResponse> infer(InferRequest request);

  virtual std::vector<RepositoryEntry> repository_index(bool ready_only) const = 0;
  virtual Status load_model(const std::string& model) = 0;    // explicit mode; kFailedPrecondition otherwise
  // The same with load parameters. A bad config override is kInvalidArgument naming what was
  // wrong, and the version already serving keeps serving. With `options` empty this is
  // load_model(model); a server that takes no parameters answers kUnimplemented otherwise.
  // See api/load_options.h for the parameters.
  virtual Status load_model(const std::string& model, const ModelLoadOptions& options);
  virtual Status unload_model(const std::string& model) = 0;  // drains in-flight requests
  // model "" = all models; version "" = all versions of the model.
  virtual Result<std::vector<ModelStats>> statistics(const std::string& model,
                                                     const std::string& version) const = 0;
  // Prometheus text exposition format (version 0.0.4) of every metric.
  virtual std::string prometheus_metrics() const = 0;

  // Stops accepting new requests (they get kUnavailable), finishes in-flight ones, unloads.
  virtual void shutdown() = 0;

  // Health change notification: `listener` is called (on a server thread) whenever live() or
  // ready() may have changed: a model version becomes ready or stops being ready, a load or
  // unload ends, shutdown starts. See api/health_events.h for the guarantees and the rules a
  // listener follows. The server must outlive the subscription.
  [[nodiscard]] std::unique_ptr<HealthEvents::Subscription> subscribe_health(
      HealthEvents::Listener listener) const {
    return health_events_.subscribe(std::move(listener));
  }
  // Implementations call this after anything that can change live() or ready(), holding none
  // of their own locks (listeners read the status back).
  void notify_health_changed() const { health_events_.notify(); }

 private:
  mutable HealthEvents health_events_;
};

}  // namespace osprey::server
