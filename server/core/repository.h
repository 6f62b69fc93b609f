// The model repository on disk, in Triton's layout:
//   <root>/<model>/config.pbtxt            (optional for ONNX models)
//   <root>/<model>/<version>/model.onnx    (or the config's default_model_filename)
// Scanning is read-only and refuses anything that resolves outside the root (symlinks too).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

inline constexpr int kMaxModels = 10000;
inline constexpr int kMaxVersionsPerModel = 1000;

struct ScannedVersion {
  int64_t version = 0;
  std::string model_file;   // canonical path of the model file
  std::string fingerprint;  // changes when any file of the version (or the config) changes
  Status status;            // e.g. the model file is missing or escapes the repository
};

struct ScannedModel {
  std::string name;
  std::string dir;               // canonical path
  Status config_status;          // config.pbtxt parse/validation result
  inference::ModelConfig config; // valid when config_status is ok
  std::vector<ScannedVersion> versions;  // ascending
};

struct RepositoryScan {
  std::vector<ScannedModel> models;   // sorted by name
  std::vector<std::string> warnings;  // entries skipped, and why
};

// `[A-Za-z0-9_.-]+`, not "." or "..".
bool is_valid_model_name(std::string_view name);
// A version directory name: a positive decimal integer without leading zeros; else -1.
int64_t parse_version_name(std::string_view name);

// Scans every model under `root`. The root must be an existing directory.
Result<RepositoryScan> scan_repository(const std::string& root);
// Scans one model; kNotFound when `<root>/<name>` is not a model directory. With
// `config_override` (already validated, see config_override.h) config.pbtxt is not read: the
// override is the model's config, and the versions' fingerprints say so (a load with another
// override, or without one, is a change).
Result<ScannedModel> scan_model(const std::string& root, const std::string& name,
                                const inference::ModelConfig* config_override = nullptr);

}  // namespace osprey::server
