// osprey::Status -> grpc::Status. Caller mistakes and limits become INVALID_ARGUMENT; the
// message is kept so the client sees which input and what was wrong.
#pragma once

#include <grpcpp/support/status.h>

#include "osprey/status.h"

namespace osprey::server::grpc_frontend {

grpc::StatusCode to_grpc_code(StatusCode code);
grpc::Status to_grpc_status(const Status& status);

}  // namespace osprey::server::grpc_frontend
