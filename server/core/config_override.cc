#include "core/config_override.h"

#include <google/protobuf/util/json_util.h>

#include "api/server.h"
#include "core/model_config_loader.h"

namespace osprey::server {

Result<inference::ModelConfig> parse_config_override(std::string_view json,
                                                     const std::string& model_name) {
  if (json.size() > kMaxConfigOverrideBytes)
    return invalid_argument("config override: ", json.size(), " bytes is over the limit of ",
                            kMaxConfigOverrideBytes, " bytes");
  if (json.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return invalid_argument("config override is empty (send the model configuration as JSON)");
  inference::ModelConfig config;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &config, options);
  if (!parsed.ok())
    return invalid_argument("config override is not a valid model configuration: ",
                            std::string(parsed.message()));
  Status st = validate_model_config(model_name, &config);
  if (!st.ok()) return st.with_context("config override");
  return config;
}

}  // namespace osprey::server
