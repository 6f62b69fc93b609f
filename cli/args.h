// Parsing of the CLI's small value syntaxes, kept free of CLI11 so it can be unit-tested.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "osprey/status.h"
#include "osprey/tensor.h"

namespace osprey::cli {

// "NAME=VALUE" -> (NAME, VALUE), split at the first '='. `flag` ("--input") names the option
// in error messages. Both sides must be non-empty.
Result<std::pair<std::string, std::string>> parse_assignment(std::string_view text, std::string_view flag);

// "1x3x224x224" (or "1,3,224,224") -> {1, 3, 224, 224}. Dims are non-negative integers.
Result<Shape> parse_dims(std::string_view text);

// Parses repeated "NAME=DIMS" values; a name given twice is an error.
Result<std::vector<std::pair<std::string, Shape>>> parse_shape_options(const std::vector<std::string>& values);
// Parses repeated "NAME=FILE" values; a name given twice is an error.
Result<std::vector<std::pair<std::string, std::string>>> parse_input_options(const std::vector<std::string>& values);

// File stems for output names: characters outside [A-Za-z0-9._-] become '_', names that would
// be empty, "." or ".." (or start with '.') become "output_<i>", and clashes get a "_<i>" suffix,
// so every result is a safe, unique file name inside one directory.
std::vector<std::string> safe_file_stems(const std::vector<std::string>& names);

}  // namespace osprey::cli
