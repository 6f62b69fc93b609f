// What a repository load may carry besides the model name: Triton's load parameters, checked
// the same way for HTTP and gRPC.
//   "config"                 the whole model configuration as JSON (Triton's ModelConfig)
//   "file:<name>"            a file of the override model directory, at its top level
//   "file:<version>/<name>"  a file of a version directory (e.g. "file:1/model.onnx")
// Files need "config" (as in Triton) and then form the model directory of that load on their own:
// the repository's files of the model are not used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "osprey/status.h"

namespace osprey::server {

inline constexpr size_t kMaxConfigOverrideBytes = size_t{1} << 20;
inline constexpr size_t kMaxLoadFiles = 64;
inline constexpr int64_t kMaxLoadFilesBytes = int64_t{1} << 30;  // all files of one load

struct ModelLoadOptions {
  // Used instead of config.pbtxt for this load; the files on disk are not changed, and a later
  // load without it goes back to config.pbtxt. At most kMaxConfigOverrideBytes.
  std::optional<std::string> config;
  // Relative path ("<name>" or "<version>/<name>", see add_load_file) -> content.
  std::map<std::string, std::string> files;
  int64_t file_bytes = 0;  // sum of the files' sizes
  bool empty() const { return !config.has_value() && files.empty(); }
};

// Checks the key of one load parameter: "config" or "file:..." (its path is checked by
// add_load_file); anything else is kInvalidArgument naming the key.
Status check_load_parameter_key(const std::string& key);
// Adds the file of parameter `key` ("file:<path>"). The path is "<name>" or "<version>/<name>"
// with <version> a version number and <name> a plain file name (no "/", "\", "." or ".."):
// nothing can land outside the override directory. Limits: kMaxLoadFiles files and
// kMaxLoadFilesBytes in all. Errors (kInvalidArgument, kResourceExhausted) name the parameter.
Status add_load_file(const std::string& key, std::string content, ModelLoadOptions* options);

// Standard base64 (RFC 4648, with '=' padding; whitespace is not allowed), as Triton's HTTP
// clients send file contents. kInvalidArgument at the first bad character.
Result<std::string> decode_base64(std::string_view text);

}  // namespace osprey::server
