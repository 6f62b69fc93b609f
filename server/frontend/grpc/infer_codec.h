// Pure translation between the KServe v2 gRPC inference messages and the server's wire-neutral
// types (api/types.h). No sockets, no threads: every rule here is unit-tested on messages.
#pragma once

#include <google/protobuf/map.h>

#include <string>

#include "api/server.h"
#include "api/types.h"
#include "osprey/status.h"
#include "osprey_server/grpc_service.pb.h"

namespace osprey::server::grpc_frontend {

using ProtoParameters = google::protobuf::Map<std::string, inference::InferParameter>;

// ModelInferRequest -> InferRequest. Tensor bytes are moved, not copied, out of `message`
// (raw_input_contents and typed bytes are left empty), so the message is consumed.
// Checks, each error naming the tensor: known datatype, non-negative dims, the element limit
// (before anything is allocated), raw and typed contents not mixed, one raw entry per input,
// byte size = elements x element size (BYTES: exactly `elements` length-prefixed strings),
// typed contents in the field the datatype uses with one value per element, and the types of
// the well-known parameters (priority, timeout, binary_data_output, binary_data,
// classification).
Result<InferRequest> decode_infer_request(inference::ModelInferRequest& message,
                                          const ServerLimits& limits);

// InferResponse -> ModelInferResponse with one raw_output_contents entry per output, in the
// order of `outputs` (what Triton's gRPC server sends). Output bytes are moved out of
// `response`.
void encode_infer_response(InferResponse&& response, inference::ModelInferResponse* out);

// Parameter maps. A uint64 above INT64_MAX and a parameter with no value are refused;
// `owner` names where the map sits in errors ("request", "input 'x'", ...).
Result<Parameters> decode_parameters(const ProtoParameters& params, const std::string& owner);
void encode_parameters(const Parameters& params, ProtoParameters* out);

}  // namespace osprey::server::grpc_frontend
