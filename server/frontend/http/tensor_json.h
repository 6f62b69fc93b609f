// Tensor element data between KServe v2 JSON "data" arrays and the raw little-endian bytes of
// WireTensor::data (BYTES elements as a 4-byte length + bytes each).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/http/json_params.h"

namespace osprey::server::http {

std::string shape_string(const std::vector<int64_t>& shape);  // "[2,3]"

// Number of elements of `shape`, or an error naming `where` for negative dims, overflow or more
// than `max_elements` (checked before anything is allocated).
Result<int64_t> checked_numel(const std::vector<int64_t>& shape, int64_t max_elements,
                              const std::string& where);

// Converts `data` (flat, or nested arrays in row-major order, at most `max_depth` deep) into raw
// bytes of `datatype`, appended to `out`. Exactly `numel` elements must be present, each of the
// datatype's JSON type: BOOL true/false, integers in the type's range, numbers for FP16/BF16/
// FP32/FP64, strings for BYTES.
Status json_to_raw(const rapidjson::Value& data, const std::string& datatype, int64_t numel,
                   int max_depth, const std::string& where, std::string* out);

// Writes `numel` elements of raw `datatype` bytes as a flat JSON array. The raw size must match.
Status raw_to_json(std::string_view raw, const std::string& datatype, int64_t numel,
                   const std::string& where, JsonWriter& w);

// Checks that a raw BYTES buffer holds exactly `numel` length-prefixed elements and nothing else.
Status check_raw_bytes(std::string_view raw, int64_t numel, const std::string& where);

}  // namespace osprey::server::http
