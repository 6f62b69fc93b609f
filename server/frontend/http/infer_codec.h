// The KServe v2 inference request/response codec for HTTP: JSON bodies, and JSON + binary tail
// bodies per the binary tensor data extension. Pure functions, no sockets (the fuzz target).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "api/types.h"
#include "osprey/status.h"

namespace osprey::server::http {

// Parses the Inference-Header-Content-Length header value (a decimal byte count).
Result<uint64_t> parse_header_length(const std::string& value);

// Decodes an infer request body. `json_length` is the Inference-Header-Content-Length header
// (absent: the whole body is JSON). Inputs with parameters.binary_data_size take their bytes from
// the tail, in input order; the tail must be consumed exactly. No tensor over
// `max_tensor_elements` is allocated. model_name / model_version are left for the caller (URL).
Result<InferRequest> decode_infer_request(std::string body, std::optional<uint64_t> json_length,
                                          int64_t max_tensor_elements);

// Which outputs go back as binary data: per-output parameters.binary_data, else the request's
// binary_data_output parameter, else JSON. Read from the request before it is handed over.
struct OutputEncoding {
  bool binary_default = false;
  std::map<std::string, bool> binary_by_name;
  bool is_binary(const std::string& name) const;
};
Result<OutputEncoding> output_encoding_of(const InferRequest& request);

struct EncodedBody {
  std::string body;
  std::optional<size_t> json_length;  // set when binary output data follows the JSON
};
// kInternal when an output's bytes do not match its datatype and shape.
Result<EncodedBody> encode_infer_response(const InferResponse& response,
                                          const OutputEncoding& encoding);

}  // namespace osprey::server::http
