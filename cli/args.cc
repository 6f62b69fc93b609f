#include "args.h"

#include <set>

namespace osprey::cli {

Result<std::pair<std::string, std::string>> parse_assignment(std::string_view text, std::string_view flag) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    return invalid_argument(flag, " '", text, "': expected NAME=VALUE");
  std::string name(text.substr(0, eq)), value(text.substr(eq + 1));
  if (name.empty()) return invalid_argument(flag, " '", text, "': the name before '=' is empty");
  if (value.empty()) return invalid_argument(flag, " '", text, "': the value after '=' is empty");
  return std::make_pair(std::move(name), std::move(value));
}

Result<Shape> parse_dims(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return invalid_argument("bad shape '", text, "': ", why, " (expected dims like 1x3x224x224)");
  };
  if (text.empty()) return bad("empty");
  Shape shape;
  size_t i = 0;
  while (true) {
    if (i >= text.size() || text[i] < '0' || text[i] > '9') return bad("each dim must be a non-negative integer");
    int64_t d = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (d > (int64_t{1} << 40)) return bad("dim too large");
      d = d * 10 + (text[i] - '0');
      ++i;
    }
    shape.push_back(d);
    if (i == text.size()) break;
    if (text[i] != 'x' && text[i] != 'X' && text[i] != ',') return bad("dims are separated by 'x'");
    ++i;
  }
  if (shape.size() > 64) return bad("more than 64 dims");
  return shape;
}

Result<std::vector<std::pair<std::string, Shape>>> parse_shape_options(const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, Shape>> out;
  std::set<std::string> seen;
  for (const auto& v : values) {
    OSPREY_ASSIGN_OR_RETURN(auto kv, parse_assignment(v, "--shape"));
    auto dims = parse_dims(kv.second);
    if (!dims.ok()) return dims.status().with_context("--shape " + kv.first);
    if (!seen.insert(kv.first).second) return invalid_argument("--shape given twice for input '", kv.first, "'");
    out.emplace_back(kv.first, std::move(dims).value());
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> parse_input_options(const std::vector<std::string>& values) {
  std::vector<std::pair<std::string, std::string>> out;
  std::set<std::string> seen;
  for (const auto& v : values) {
    OSPREY_ASSIGN_OR_RETURN(auto kv, parse_assignment(v, "--input"));
    if (!seen.insert(kv.first).second) return invalid_argument("--input given twice for input '", kv.first, "'");
    out.push_back(std::move(kv));
  }
  return out;
}

std::vector<std::string> safe_file_stems(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  std::set<std::string> used;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string s;
    for (char c : names[i]) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-';
      s += ok ? c : '_';
    }
    if (s.size() > 200) s.resize(200);
    if (s.empty() || s[0] == '.') s = "output_" + std::to_string(i);
    std::string candidate = s;
    for (size_t k = 1; used.count(candidate); ++k) candidate = s + "_" + std::to_string(k);
    used.insert(candidate);
    out.push_back(candidate);
  }
  return out;
}

}  // namespace osprey::cli
