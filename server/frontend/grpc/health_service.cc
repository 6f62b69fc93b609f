#include "frontend/grpc/health_service.h"

namespace osprey::server::grpc_frontend {

using grpc::health::v1::HealthCheckResponse;

HealthService::HealthService(const Server* server)
    : server_(server),
      watchers_([this](const std::string& service) { return status_of(service); }),
      subscription_(server->subscribe_health([this] { watchers_.refresh(); })) {}

ServingStatus HealthService::status_of(const std::string& service) const {
  if (!service.empty() && service != "inference.GRPCInferenceService")
    return HealthCheckResponse::SERVICE_UNKNOWN;
  return server_->live() && server_->ready() ? HealthCheckResponse::SERVING
                                             : HealthCheckResponse::NOT_SERVING;
}

grpc::ServerUnaryReactor* HealthService::Check(grpc::CallbackServerContext* ctx,
                                               const grpc::health::v1::HealthCheckRequest* req,
                                               grpc::health::v1::HealthCheckResponse* resp) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  const ServingStatus status = status_of(req->service());
  if (status == HealthCheckResponse::SERVICE_UNKNOWN) {
    reactor->Finish(grpc::Status(grpc::StatusCode::NOT_FOUND,
                                 "unknown service '" + req->service() +
                                     "'; known: \"\" and \"inference.GRPCInferenceService\""));
    return reactor;
  }
  resp->set_status(status);
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* HealthService::Watch(
    grpc::CallbackServerContext*, const grpc::health::v1::HealthCheckRequest* req) {
  return watchers_.open(req->service());
}

}  // namespace osprey::server::grpc_frontend
