// config.pbtxt: parsing (protobuf text format, errors with file:line:column), validation of
// what can be checked without the model, the engine parameters Osprey reads from it, and the
// JSON form the HTTP `config` endpoint returns.
#pragma once

#include <string>
#include <string_view>

#include "osprey/options.h"
#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

// Limits on a config, explicit so a hostile file cannot ask for absurd resources.
inline constexpr int kMaxInstanceCount = 64;
inline constexpr int kMaxEngineThreads = 1024;
inline constexpr uint64_t kMaxQueueDelayMicroseconds = uint64_t{60} * 1000 * 1000;
inline constexpr uint32_t kMaxWarmupCount = 1000;
inline constexpr size_t kMaxConfigBytes = size_t{1} << 20;

// Parses config.pbtxt text. `source` (the file path) prefixes every message. An unknown
// field is protobuf's own error ("Message type "inference.ModelConfig" has no field named
// "sequence_batching"") as "<source>:<line>:<column>: <message>".
Result<inference::ModelConfig> parse_model_config(std::string_view text, const std::string& source);

// Checks the config against Osprey's rules; fills defaults (name from the directory,
// platform, backend). `model_name` is the model's directory name.
Status validate_model_config(const std::string& model_name, inference::ModelConfig* config);

// Reads `<model_dir>/config.pbtxt` if it exists (else a config with only the name), parses
// and validates it.
Result<inference::ModelConfig> load_model_config(const std::string& model_dir,
                                                 const std::string& model_name);

// The `parameters` Osprey understands, parsed and range-checked.
struct EngineParameters {
  int threads = 0;             // 0 = share the server's thread budget
  // 0..3; absent = the engine's default (SessionOptions), so a served model runs the same
  // optimized graph as `osprey run/bench`.
  int optimization_level = SessionOptions{}.optimization_level;
  std::string precision = "exact";
};
Result<EngineParameters> engine_parameters(const inference::ModelConfig& config);

// The config as JSON with proto field names (as Triton's HTTP `config` endpoint returns it).
std::string model_config_to_json(const inference::ModelConfig& config);

// The number of instances the config asks for (sum over instance groups; at least 1).
int instance_count(const inference::ModelConfig& config);

}  // namespace osprey::server
