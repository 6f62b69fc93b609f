// Tensor payload rules shared by the gRPC codec: element counts, typed contents -> raw
// little-endian bytes, and validation of raw buffers (including BYTES length prefixes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "osprey/status.h"
#include "osprey_server/grpc_service.pb.h"

namespace osprey::server::grpc_frontend {

// Number of elements of `shape`; refuses negative dims, overflow and more than
// `max_elements`. `tensor` names the tensor in errors ("input 'x'").
Result<int64_t> checked_element_count(const std::vector<int64_t>& shape, int64_t max_elements,
                                      const std::string& tensor);

// Converts typed contents to the raw layout of `datatype` (a known KServe datatype) with
// exactly `elements` values: little-endian, row-major; BYTES as 4-byte little-endian length +
// bytes per element. Refuses a field that
// does not belong to the datatype, a value count other than `elements`, integers outside the
// datatype's range, and FP16/BF16 (which have no typed field).
Result<std::string> typed_contents_to_raw(const inference::InferTensorContents& contents,
                                          const std::string& datatype, int64_t elements,
                                          const std::string& tensor);

// Checks a raw buffer against `elements` of `datatype`: byte size for fixed-size types; for
// BYTES, that it holds exactly `elements` complete length-prefixed strings.
Status check_raw_contents(const std::string& raw, const std::string& datatype, int64_t elements,
                          const std::string& tensor);

// True when any typed field of `contents` holds a value.
bool has_typed_values(const inference::InferTensorContents& contents);

}  // namespace osprey::server::grpc_frontend
