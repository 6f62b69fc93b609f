// BYTES tensors on the wire: each element is a 4-byte little-endian length followed by that
// many bytes (Triton's raw layout).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "osprey/status.h"

namespace osprey::server::processing {

// Splits `data` into exactly `count` elements; an error says where the framing broke.
Result<std::vector<std::string_view>> split_bytes_elements(std::string_view data, int64_t count);

// Appends one element (length prefix + bytes) to `out`.
void append_bytes_element(std::string_view element, std::string* out);

}  // namespace osprey::server::processing
