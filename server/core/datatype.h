// Conversions between the three names of an element type: the config's inference::DataType
// (TYPE_FP32), the KServe v2 wire name ("FP32") and the engine's osprey::DType.
#pragma once

#include <string>

#include "osprey/dtype.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

// "TYPE_FP32" -> "FP32"; TYPE_STRING -> "BYTES"; TYPE_INVALID -> "".
std::string wire_datatype(inference::DataType type);
// "FP32" -> TYPE_FP32; unknown names -> TYPE_INVALID.
inference::DataType config_datatype_from_wire(const std::string& wire);
// Engine element type -> config type (TYPE_INVALID when there is none).
inference::DataType config_datatype(DType dtype);
// Config type -> engine element type (kUndefined for TYPE_INVALID).
DType engine_dtype(inference::DataType type);
// Bytes per element; 0 for TYPE_STRING and TYPE_INVALID.
int64_t config_datatype_size(inference::DataType type);

}  // namespace osprey::server
