#include "frontend/http/url_path.h"

namespace osprey::server::http {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
    int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      return invalid_argument("bad percent-escape in URL path segment '", std::string(s), "'");
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace

Result<std::vector<std::string>> split_target(std::string_view target) {
  std::string_view path = target.substr(0, target.find_first_of("?#"));
  if (path.empty() || path.front() != '/')
    return invalid_argument("request target '", std::string(target), "' is not an absolute path");
  std::vector<std::string> segments;
  size_t pos = 1;
  while (true) {
    size_t slash = path.find('/', pos);
    std::string_view seg = path.substr(pos, slash == std::string_view::npos ? slash : slash - pos);
    OSPREY_ASSIGN_OR_RETURN(std::string decoded, percent_decode(seg));
    segments.push_back(std::move(decoded));
    if (slash == std::string_view::npos) break;
    pos = slash + 1;
  }
  return segments;
}

Status check_model_name(const std::string& name) {
  if (name.empty()) return invalid_argument("model name is empty");
  if (name.size() > 256) return invalid_argument("model name is longer than 256 bytes");
  if (name == "." || name == "..") return invalid_argument("model name '", name, "' is not allowed");
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
      return invalid_argument("model name contains a '/', '\\' or control character");
  return Status::Ok();
}

Status check_model_version(const std::string& version) {
  if (version.empty() || version.size() > 18)
    return invalid_argument("model version '", version, "' must be 1 to 18 decimal digits");
  for (char c : version)
    if (c < '0' || c > '9')
      return invalid_argument("model version '", version, "' must be 1 to 18 decimal digits");
  return Status::Ok();
}

}  // namespace osprey::server::http
