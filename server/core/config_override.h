// A configuration sent with a load request (Triton's load parameter "config"): the whole
// ModelConfig as JSON, used instead of config.pbtxt for that load.
#pragma once

#include <string>
#include <string_view>

#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

// Parses `json` (at most kMaxConfigOverrideBytes; proto field names such as "max_batch_size"
// and JSON names such as "maxBatchSize" are both accepted, an unknown field is an error naming
// it) and runs the same validation as a config.pbtxt (validate_model_config): the name, if
// given, must be `model_name`. Errors are kInvalidArgument and start with "config override".
Result<inference::ModelConfig> parse_config_override(std::string_view json,
                                                     const std::string& model_name);

}  // namespace osprey::server
