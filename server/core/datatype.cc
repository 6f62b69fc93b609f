#include "core/datatype.h"

#include <array>

namespace osprey::server {
namespace {

struct TypeRow {
  inference::DataType config;
  const char* wire;
  DType engine;
  int64_t size;
};

constexpr std::array<TypeRow, 14> kTypes = {{
    {inference::TYPE_BOOL, "BOOL", DType::kBool, 1},
    {inference::TYPE_UINT8, "UINT8", DType::kUInt8, 1},
    {inference::TYPE_UINT16, "UINT16", DType::kUInt16, 2},
    {inference::TYPE_UINT32, "UINT32", DType::kUInt32, 4},
    {inference::TYPE_UINT64, "UINT64", DType::kUInt64, 8},
    {inference::TYPE_INT8, "INT8", DType::kInt8, 1},
    {inference::TYPE_INT16, "INT16", DType::kInt16, 2},
    {inference::TYPE_INT32, "INT32", DType::kInt32, 4},
    {inference::TYPE_INT64, "INT64", DType::kInt64, 8},
    {inference::TYPE_FP16, "FP16", DType::kFloat16, 2},
    {inference::TYPE_FP32, "FP32", DType::kFloat32, 4},
    {inference::TYPE_FP64, "FP64", DType::kFloat64, 8},
    {inference::TYPE_STRING, "BYTES", DType::kString, 0},
    {inference::TYPE_BF16, "BF16", DType::kBFloat16, 2},
}};

const TypeRow* find_config(inference::DataType t) {
  for (const auto& row : kTypes)
    if (row.config == t) return &row;
  return nullptr;
}

}  // namespace

std::string wire_datatype(inference::DataType type) {
  const TypeRow* row = find_config(type);
  return row ? row->wire : "";
}

inference::DataType config_datatype_from_wire(const std::string& wire) {
  for (const auto& row : kTypes)
    if (wire == row.wire) return row.config;
  return inference::TYPE_INVALID;
}

inference::DataType config_datatype(DType dtype) {
  for (const auto& row : kTypes)
    if (row.engine == dtype) return row.config;
  return inference::TYPE_INVALID;
}

DType engine_dtype(inference::DataType type) {
  const TypeRow* row = find_config(type);
  return row ? row->engine : DType::kUndefined;
}

int64_t config_datatype_size(inference::DataType type) {
  const TypeRow* row = find_config(type);
  return row ? row->size : 0;
}

}  // namespace osprey::server
