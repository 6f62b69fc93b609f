#include "api/types.h"

#include <string_view>
#include <utility>

namespace osprey::server {
namespace {

constexpr std::pair<std::string_view, int64_t> kDatatypes[] = {
    {"BOOL", 1},  {"UINT8", 1}, {"UINT16", 2}, {"UINT32", 4}, {"UINT64", 8},
    {"INT8", 1},  {"INT16", 2}, {"INT32", 4},  {"INT64", 8},  {"FP16", 2},
    {"BF16", 2},  {"FP32", 4},  {"FP64", 8},   {"BYTES", 0},
};

}  // namespace

int64_t datatype_size(const std::string& datatype) {
  for (const auto& [name, size] : kDatatypes)
    if (name == datatype) return size;
  return 0;
}

bool is_known_datatype(const std::string& datatype) {
  for (const auto& [name, size] : kDatatypes)
    if (name == datatype) return true;
  return false;
}

}  // namespace osprey::server
