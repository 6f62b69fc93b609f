// A configuration sent with a load request (Triton's load parameter "config"): the whole
// ModelConfig as JSON, used instead of config.pbtxt for that load.
#pragma once

#include <map>
#include <memory>
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

// The model directory of a load that sent its files (Triton's "file:" load parameters): a fresh
// directory under the system's temp directory, `<root>/<model>/...`, removed with the object.
class OverrideDirectory {
 public:
  // Writes `files` (relative paths already checked by add_load_file) under a new directory.
  static Result<std::unique_ptr<OverrideDirectory>> create(
      const std::string& model, const std::map<std::string, std::string>& files);
  ~OverrideDirectory();
  OverrideDirectory(const OverrideDirectory&) = delete;
  OverrideDirectory& operator=(const OverrideDirectory&) = delete;

  const std::string& root() const { return root_; }  // a model repository holding one model

 private:
  explicit OverrideDirectory(std::string root) : root_(std::move(root)) {}
  std::string root_;
};

}  // namespace osprey::server
