#include "metrics/exposition.h"

#include <charconv>
#include <cmath>

namespace osprey::server::metrics {
namespace {

bool is_alpha_or_underscore(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

}  // namespace

bool valid_metric_name(const std::string& name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(is_alpha_or_underscore(c) || c == ':' || (i > 0 && is_digit(c)))) return false;
  }
  return true;
}

bool valid_label_name(const std::string& name) {
  if (name.empty() || name.rfind("__", 0) == 0) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (!(is_alpha_or_underscore(c) || (i > 0 && is_digit(c)))) return false;
  }
  return true;
}

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string escape_help(const std::string& help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out;
}

std::string format_value(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, res.ptr);
}

void write_header(std::string* out, const std::string& name, const std::string& help,
                  const char* type) {
  *out += "# HELP ";
  *out += name;
  *out += ' ';
  *out += escape_help(help);
  *out += "\n# TYPE ";
  *out += name;
  *out += ' ';
  *out += type;
  *out += '\n';
}

void write_sample(std::string* out, const std::string& name,
                  const std::vector<std::string>& label_names,
                  const std::vector<std::string>& label_values, const std::string& value,
                  const std::string& extra_name, const std::string& extra_value) {
  *out += name;
  const bool has_extra = !extra_name.empty();
  if (!label_names.empty() || has_extra) {
    *out += '{';
    for (size_t i = 0; i < label_names.size(); ++i) {
      if (i > 0) *out += ',';
      *out += label_names[i];
      *out += "=\"";
      *out += escape_label_value(i < label_values.size() ? label_values[i] : std::string());
      *out += '"';
    }
    if (has_extra) {
      if (!label_names.empty()) *out += ',';
      *out += extra_name;
      *out += "=\"";
      *out += escape_label_value(extra_value);
      *out += '"';
    }
    *out += '}';
  }
  *out += ' ';
  *out += value;
  *out += '\n';
}

}  // namespace osprey::server::metrics
