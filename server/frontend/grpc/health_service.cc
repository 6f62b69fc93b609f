#include "frontend/grpc/health_service.h"

namespace osprey::server::grpc_frontend {

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* ctx,
                                               const grpc::health::v1::HealthCheckRequest* req,
                                               grpc::health::v1::HealthCheckResponse* resp) {
  using grpc::health::v1::HealthCheckResponse;
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  if (!req->service().empty() && req->service() != "inference.GRPCInferenceService") {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service '" + req->service() +
                                     "'; known: \"\" and \"inference.GRPCInferenceService\""));
    return reactor;
  }
  resp->set_status(server_->ready() ? HealthCheckResponse::SERVING
                                    : HealthCheckResponse::NOT_SERVING);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

}  // namespace osprey::server::grpc_frontend
