// grpc.health.v1.Health. Check answers SERVING while Server::ready(), NOT_SERVING otherwise,
// for the whole server ("") and for "inference.GRPCInferenceService"; any other service name
// is NOT_FOUND. Watch is not served: gRPC answers it UNIMPLEMENTED.
#pragma once

#include "api/server.h"
#include "osprey_server/health.grpc.pb.h"

namespace osprey::server::grpc_frontend {

class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  explicit HealthService(const Server* server) : server_(server) {}

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* ctx,
                                  const grpc::health::v1::HealthCheckRequest* req,
                                  grpc::health::v1::HealthCheckResponse* resp) override;

 private:
  const Server* server_;
};

}  // namespace osprey::server::grpc_frontend
