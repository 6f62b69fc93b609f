#include "core/config_override.h"

#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>

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

Result<std::unique_ptr<OverrideDirectory>> OverrideDirectory::create(
    const std::string& model, const std::map<std::string, std::string>& files) {
  namespace fs = std::filesystem;
  static std::atomic<uint64_t> counter{0};
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) return internal_error("no temporary directory for the load's files: ", ec.message());
  fs::path root = tmp / str_cat("osprey-load-", ::getpid(), "-", counter++);
  if (!fs::create_directory(root, ec) || ec)
    return internal_error("cannot create ", root.string(), ": ",
                          ec ? ec.message() : "it already exists");
  std::unique_ptr<OverrideDirectory> dir(new OverrideDirectory(root.string()));
  const fs::path model_dir = root / model;
  for (const auto& [relative, content] : files) {
    const fs::path path = model_dir / relative;
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (ec || !out)
      return internal_error("cannot write the load's file '", relative, "' under ", root.string());
  }
  fs::create_directories(model_dir, ec);  // even with no file, the model directory exists
  return dir;
}

OverrideDirectory::~OverrideDirectory() {
  std::error_code ec;
  std::filesystem::remove_all(root_, ec);
}

}  // namespace osprey::server
