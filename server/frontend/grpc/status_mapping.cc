#include "frontend/grpc/status_mapping.h"

namespace osprey::server::grpc_frontend {

grpc::StatusCode to_grpc_code(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return grpc::StatusCode::OK;
    case StatusCode::kInvalidArgument:
    case StatusCode::kResourceExhausted:
    case StatusCode::kFailedPrecondition: return grpc::StatusCode::INVALID_ARGUMENT;
    case StatusCode::kNotFound: return grpc::StatusCode::NOT_FOUND;
    case StatusCode::kUnavailable: return grpc::StatusCode::UNAVAILABLE;
    case StatusCode::kUnimplemented: return grpc::StatusCode::UNIMPLEMENTED;
    case StatusCode::kInternal: return grpc::StatusCode::INTERNAL;
  }
  return grpc::StatusCode::INTERNAL;
}

grpc::Status to_grpc_status(const Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(to_grpc_code(status.code()), status.message());
}

}  // namespace osprey::server::grpc_frontend
