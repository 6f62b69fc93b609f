// The gRPC front end: inference.GRPCInferenceService and grpc.health.v1.Health over one
// listening address, translating to the Server API (api/server.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "api/server.h"
#include "osprey/status.h"

namespace grpc {
class Server;
}

namespace osprey::server::grpc_frontend {

class InferenceService;
class HealthService;

struct GrpcServerOptions {
  std::string address = "0.0.0.0:8001";             // host:port; port 0 = a free port (see port())
  int stream_window = 8;                            // requests of one stream in the server at once
  std::chrono::milliseconds shutdown_grace{10000};  // used by the destructor
};

class GrpcServer {
 public:
  // Starts serving `server` (which must outlive the GrpcServer). The largest accepted message
  // is ServerLimits::max_request_bytes (capped at 2 GiB - 1, gRPC's limit). Fails with
  // kInvalidArgument for a malformed address and kUnavailable when the address cannot be
  // bound (port in use, address not local).
  static Result<std::unique_ptr<GrpcServer>> start(Server* server,
                                                   const GrpcServerOptions& options);
  ~GrpcServer();
  GrpcServer(const GrpcServer&) = delete;
  GrpcServer& operator=(const GrpcServer&) = delete;

  int port() const { return port_; }
  // grpc.health.v1 Watch streams open now (a diagnostic).
  int64_t open_health_watches() const;

  // Ends open health Watch streams (NOT_SERVING, then UNAVAILABLE), stops accepting calls,
  // lets calls in progress finish for up to `grace` (then cancels them; a cancelled ModelInfer
  // still waits for its inference to return), and returns once every call is done. Idempotent.
  void shutdown(std::chrono::milliseconds grace);

 private:
  GrpcServer(std::unique_ptr<InferenceService> inference, std::unique_ptr<HealthService> health,
             std::chrono::milliseconds grace);

  std::unique_ptr<InferenceService> inference_;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::Server> server_;  // after the services: destroyed before them
  int port_ = 0;
  std::chrono::milliseconds grace_;
  std::mutex shutdown_mu_;
  bool shut_down_ = false;
};

}  // namespace osprey::server::grpc_frontend
