#include "core/repository.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "core/model_config_loader.h"

namespace osprey::server {
namespace {

namespace fs = std::filesystem;

bool is_inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

// Canonical path of `p`, refused when it does not exist or resolves outside `root`.
Result<fs::path> resolve_inside(const fs::path& root, const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::canonical(p, ec);
  if (ec) return not_found(p.string(), ": ", ec.message());
  if (!is_inside(root, c))
    return invalid_argument(p.string(), " resolves to ", c.string(),
                            ", outside the model repository");
  return c;
}

std::string file_stamp(const fs::path& p) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) return p.filename().string() + ":?;";
  auto mtime = fs::last_write_time(p, ec).time_since_epoch().count();
  return str_cat(p.filename().string(), ":", size, ":", mtime, ";");
}

// Sizes and mtimes of the regular files directly in `dir` (model file, external data).
std::string dir_stamp(const fs::path& dir) {
  std::vector<std::string> parts;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) parts.push_back(file_stamp(it->path()));
  std::sort(parts.begin(), parts.end());
  std::string out;
  for (auto& p : parts) out += p;
  return out;
}

ScannedVersion scan_version(const fs::path& root, const fs::path& version_dir, int64_t version,
                            const std::string& model_filename, const std::string& config_stamp) {
  ScannedVersion v;
  v.version = version;
  auto dir = resolve_inside(root, version_dir);
  if (!dir.ok()) {
    v.status = dir.status();
    return v;
  }
  fs::path file = *dir / model_filename;
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    v.status = not_found("version ", version, ": ", file.string(), " does not exist");
    return v;
  }
  auto resolved = resolve_inside(root, file);
  if (!resolved.ok()) {
    v.status = resolved.status();
    return v;
  }
  if (!fs::is_regular_file(*resolved, ec)) {
    v.status = invalid_argument("version ", version, ": ", file.string(), " is not a regular file");
    return v;
  }
  v.model_file = resolved->string();
  v.fingerprint = config_stamp + "|" + dir_stamp(*dir) + "|" + file_stamp(*resolved);
  return v;
}

// The config's bytes, the same for equal configs (map entries in key order).
std::string deterministic_bytes(const inference::ModelConfig& config) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    config.SerializeToCodedStream(&coded);
  }
  return out;
}

Result<ScannedModel> scan_model_dir(const fs::path& root, const std::string& name,
                                    std::vector<std::string>* warnings,
                                    const inference::ModelConfig* config_override) {
  if (!is_valid_model_name(name))
    return invalid_argument("model name '", name, "' is not [A-Za-z0-9_.-]+");
  OSPREY_ASSIGN_OR_RETURN(fs::path dir, resolve_inside(root, root / name));
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return not_found("'", name, "' is not a model directory");
  ScannedModel m;
  m.name = name;
  m.dir = dir.string();
  std::string config_stamp = "no-config";
  fs::path config_path = dir / "config.pbtxt";
  if (config_override) {
    m.config = *config_override;
    config_stamp = "override:" + m.dir + ":" + deterministic_bytes(m.config);
  } else {
    if (fs::exists(config_path, ec)) {
      auto resolved = resolve_inside(root, config_path);
      if (!resolved.ok()) {
        m.config_status = resolved.status();
        return m;
      }
      config_stamp = file_stamp(*resolved);
    }
    auto config = load_model_config(m.dir, name);
    if (!config.ok()) {
      m.config_status = config.status();
    } else {
      m.config = std::move(config).value();
    }
  }
  std::string filename =
      m.config.default_model_filename().empty() ? "model.onnx" : m.config.default_model_filename();
  std::map<int64_t, fs::path> version_dirs;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    std::string entry = it->path().filename().string();
    int64_t v = parse_version_name(entry);
    if (v < 0) {
      // Triton ignores non-numeric subdirectories (e.g. warmup/); note bad numeric ones.
      if (!entry.empty() && std::isdigit(static_cast<unsigned char>(entry[0])) && warnings)
        warnings->push_back(str_cat(name, "/", entry, ": not a version (positive integer)"));
      continue;
    }
    version_dirs[v] = it->path();
    if (version_dirs.size() > static_cast<size_t>(kMaxVersionsPerModel))
      return resource_exhausted("model '", name, "': more than ", kMaxVersionsPerModel,
                                " versions");
  }
  for (const auto& [v, path] : version_dirs)
    m.versions.push_back(scan_version(root, path, v, filename, config_stamp));
  return m;
}

Result<fs::path> canonical_root(const std::string& root) {
  std::error_code ec;
  fs::path r = fs::canonical(root, ec);
  if (ec) return not_found("model repository '", root, "': ", ec.message());
  if (!fs::is_directory(r, ec))
    return invalid_argument("model repository '", root, "' is not a directory");
  return r;
}

}  // namespace

bool is_valid_model_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-'))
      return false;
  return true;
}

int64_t parse_version_name(std::string_view name) {
  if (name.empty() || name.size() > 18 || name[0] == '0') return -1;
  int64_t v = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

Result<RepositoryScan> scan_repository(const std::string& root) {
  OSPREY_ASSIGN_OR_RETURN(fs::path r, canonical_root(root));
  RepositoryScan scan;
  std::error_code ec;
  std::vector<std::string> names;
  for (fs::directory_iterator it(r, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) continue;
    names.push_back(it->path().filename().string());
    if (names.size() > static_cast<size_t>(kMaxModels))
      return resource_exhausted("model repository '", root, "': more than ", kMaxModels, " models");
  }
  if (ec) return not_found("model repository '", root, "': ", ec.message());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto m = scan_model_dir(r, name, &scan.warnings, nullptr);
    if (m.ok())
      scan.models.push_back(std::move(m).value());
    else
      scan.warnings.push_back(str_cat(name, ": ", m.status().message()));
  }
  return scan;
}

Result<ScannedModel> scan_model(const std::string& root, const std::string& name,
                                const inference::ModelConfig* config_override) {
  OSPREY_ASSIGN_OR_RETURN(fs::path r, canonical_root(root));
  return scan_model_dir(r, name, nullptr, config_override);
}

}  // namespace osprey::server
