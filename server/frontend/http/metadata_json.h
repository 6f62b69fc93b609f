// JSON bodies of the non-inference KServe v2 / Triton endpoints.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"
#include "osprey/status.h"

namespace inference {
class ModelConfig;
}

namespace osprey::server::http {

std::string error_json(const std::string& message);  // {"error":"..."}
std::string server_metadata_json(const ServerMetadata& m);
std::string model_metadata_json(const ModelMetadata& m);
// [{"name","version","state","reason"}, ...]
std::string repository_index_json(const std::vector<RepositoryEntry>& entries);
// Triton's {"model_stats":[...]} statistics extension body.
std::string statistics_json(const std::vector<ModelStats>& stats);
// The model configuration as protobuf JSON with proto field names, as Triton's config endpoint.
Result<std::string> model_config_json(const inference::ModelConfig& config);

}  // namespace osprey::server::http
