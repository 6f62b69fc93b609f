#include "api/load_options.h"

#include <array>

namespace osprey::server {
namespace {

bool is_plain_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  for (char c : name)
    if (c == '/' || c == '\\' || c == '\0') return false;
  return true;
}

bool is_version_number(std::string_view s) {
  if (s.empty() || s.size() > 18 || s[0] == '0') return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

Status check_load_parameter_key(const std::string& key) {
  if (key == "config" || key.rfind("file:", 0) == 0) return Status::Ok();
  return invalid_argument("unknown load parameter '", key,
                          "' (known: \"config\" and \"file:<version>/<name>\")");
}

Status add_load_file(const std::string& key, std::string content, ModelLoadOptions* options) {
  if (key.rfind("file:", 0) != 0)
    return invalid_argument("load parameter '", key, "' is not a file: parameter");
  const std::string path = key.substr(5);
  const size_t slash = path.find('/');
  const bool ok = slash == std::string::npos
                      ? is_plain_name(path)
                      : is_version_number(std::string_view(path).substr(0, slash)) &&
                            is_plain_name(std::string_view(path).substr(slash + 1));
  if (!ok)
    return invalid_argument("load parameter '", key.substr(0, 300),
                            "': the path must be <name> or <version>/<name> (a version number "
                            "and a plain file name)");
  if (options->files.size() >= kMaxLoadFiles)
    return resource_exhausted("load parameter '", key, "': more than ", kMaxLoadFiles, " files");
  const auto size = static_cast<int64_t>(content.size());
  if (size > kMaxLoadFilesBytes - options->file_bytes)
    return resource_exhausted("load parameter '", key, "': the files of one load are limited to ",
                              kMaxLoadFilesBytes, " bytes in all");
  if (!options->files.emplace(path, std::move(content)).second)
    return invalid_argument("load parameter '", key, "' is given twice");
  options->file_bytes += size;
  return Status::Ok();
}

Result<std::string> decode_base64(std::string_view text) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i)
      v[static_cast<unsigned char>(alphabet[i])] = static_cast<int8_t>(i);
    return v;
  }();
  if (text.size() % 4 != 0)
    return invalid_argument("base64: length ", text.size(), " is not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    int pad = 0;
    uint32_t group = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      int v = kValue[static_cast<unsigned char>(c)];
      if (c == '=' && last && k >= 2 && (k == 3 || text[i + 3] == '=')) {
        ++pad;
        v = 0;
      } else if (v < 0 || pad > 0) {
        return invalid_argument("base64: bad character at offset ", i + k);
      }
      group = group << 6 | static_cast<uint32_t>(v);
    }
    out.push_back(static_cast<char>(group >> 16));
    if (pad < 2) out.push_back(static_cast<char>(group >> 8 & 0xFF));
    if (pad < 1) out.push_back(static_cast<char>(group & 0xFF));
  }
  return out;
}

}  // namespace osprey::server
