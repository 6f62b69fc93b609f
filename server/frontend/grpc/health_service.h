// grpc.health.v1.Health for the whole server ("") and for "inference.GRPCInferenceService":
// SERVING while Server::live() and Server::ready(), NOT_SERVING otherwise.
//  - Check answers once; any other service name is NOT_FOUND.
//  - Watch streams the status at once and on every change (see health_watch.h); any other
//    service name gets SERVICE_UNKNOWN and the stream stays open, as the protocol asks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "api/server.h"
#include "frontend/grpc/health_watch.h"
#include "osprey_server/health.grpc.pb.h"

namespace osprey::server::grpc_frontend {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  // Watch streams are told about changes by the server's health notification.
  explicit HealthService(const Server* server);

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* ctx,
                                  const grpc::health::v1::HealthCheckRequest* req,
                                  grpc::health::v1::HealthCheckResponse* resp) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* ctx, const grpc::health::v1::HealthCheckRequest* req) override;

  // Shutdown, first step: ends the open Watch streams and refuses new ones, so that they do not
  // hold up the gRPC server's shutdown.
  void close_watches() { watchers_.close_all(); }
  // Shutdown, last step: returns once every Watch stream is done.
  void wait_idle() { watchers_.wait_idle(); }
  int64_t open_watches() const { return watchers_.open_count(); }

 private:
  // SERVICE_UNKNOWN for a name this service does not know.
  ServingStatus status_of(const std::string& service) const;

  const Server* server_;
  HealthWatchers watchers_;
  // Last: dropped first, so no notification reaches watchers_ once it starts going away.
  std::unique_ptr<HealthEvents::Subscription> subscription_;
};

}  // namespace osprey::server::grpc_frontend
