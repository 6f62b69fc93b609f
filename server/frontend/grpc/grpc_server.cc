#include "frontend/grpc/grpc_server.h"

#include <grpcpp/grpcpp.h>

#include <charconv>
#include <climits>
#include <utility>

#include "frontend/grpc/health_service.h"
#include "frontend/grpc/inference_service.h"

namespace osprey::server::grpc_frontend {
namespace {

Status check_address(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return invalid_argument("gRPC address '", address, "' is not host:port");
  const std::string_view port(address.data() + colon + 1, address.size() - colon - 1);
  int value = -1;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value < 0 ||
      value > 65535)
    return invalid_argument("gRPC address '", address, "': port '", port,
                            "' is not a number in 0..65535");
  return Status::Ok();
}

}  // namespace

GrpcServer::GrpcServer(std::unique_ptr<InferenceService> inference,
                       std::unique_ptr<HealthService> health, std::chrono::milliseconds grace)
    : inference_(std::move(inference)), health_(std::move(health)), grace_(grace) {}

Result<std::unique_ptr<GrpcServer>> GrpcServer::start(Server* server,
                                                      const GrpcServerOptions& options) {
  OSPREY_RETURN_IF_ERROR(check_address(options.address));
  std::unique_ptr<GrpcServer> self(new GrpcServer(
      std::make_unique<InferenceService>(server, options.stream_window),
      std::make_unique<HealthService>(server), options.shutdown_grace));

  grpc::ServerBuilder builder;
  // Our own grpc.health.v1 service is registered below; gRPC's built-in one would clash.
  grpc::EnableDefaultHealthCheckService(false);
  builder.AddListeningPort(options.address, grpc::InsecureServerCredentials(), &self->port_);
  // Without this gRPC binds with SO_REUSEPORT, and a second server on a busy port would
  // "succeed" and share the port instead of failing.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  const int64_t max_request = server->limits().max_request_bytes;
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<int64_t>(max_request, INT_MAX)));
  builder.SetMaxSendMessageSize(INT_MAX);
  // Every method uses the callback API: no synchronous-server thread pool is created; calls
  // are dispatched on gRPC's own small set of event threads and inference runs on the
  // server's threads, so nothing here scales threads with requests.
  builder.RegisterService(self->inference_.get());
  builder.RegisterService(self->health_.get());
  self->server_ = builder.BuildAndStart();
  if (self->server_ == nullptr || self->port_ == 0)
    return unavailable("cannot listen for gRPC on '", options.address,
                       "': the port is in use or the address is not local");
  return self;
}

void GrpcServer::shutdown(std::chrono::milliseconds grace) {
  std::lock_guard<std::mutex> lock(shutdown_mu_);
  if (shut_down_ || server_ == nullptr) return;
  shut_down_ = true;
  // Watch streams never end by themselves: end them first, or Shutdown would wait out `grace`.
  health_->close_watches();
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  inference_->wait_idle();
  health_->wait_idle();
  server_->Wait();
}

int64_t GrpcServer::open_health_watches() const {
  return health_->open_watches();
}

GrpcServer::~GrpcServer() {
  shutdown(grace_);
}

}  // namespace osprey::server::grpc_frontend
