// Building blocks of the Prometheus text exposition format 0.0.4.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace osprey::server::metrics {

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool valid_metric_name(const std::string& name);
// [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved).
bool valid_label_name(const std::string& name);

// Label value: backslash, double quote and newline escaped as \\, \" and \n.
std::string escape_label_value(const std::string& value);
// HELP text: backslash and newline escaped as \\ and \n.
std::string escape_help(const std::string& help);
// Shortest text that reads back as the same double; "+Inf", "-Inf", "NaN".
std::string format_value(double v);

// "# HELP name help\n# TYPE name type\n"
void write_header(std::string* out, const std::string& name, const std::string& help,
                  const char* type);
// name{l1="v1",l2="v2"} value\n  (no braces when there are no labels). `extra_name`/`extra_value`
// append one more label (a histogram's "le") when extra_name is non-empty.
void write_sample(std::string* out, const std::string& name,
                  const std::vector<std::string>& label_names,
                  const std::vector<std::string>& label_values, const std::string& value,
                  const std::string& extra_name = "", const std::string& extra_value = "");

}  // namespace osprey::server::metrics
