// Typed reads of JSON object members for the result readers of `osprey select`; every error
// names where in the file the bad member is. Internal to osprey_bench_select (RapidJSON).
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <string>

#include "osprey/status.h"

namespace osprey::bench::select::json {

using Value = rapidjson::Value;

inline const Value* member(const Value& obj, const char* name) {
  if (!obj.IsObject()) return nullptr;
  auto it = obj.FindMember(name);
  return it == obj.MemberEnd() ? nullptr : &it->value;
}

// A number member; -1 when absent or null (reports write null for "not recorded").
inline Result<double> number(const Value& obj, const char* name, const std::string& where) {
  const Value* v = member(obj, name);
  if (!v || v->IsNull()) return -1.0;
  if (!v->IsNumber()) return invalid_argument(where, ": '", name, "' is not a number");
  return v->GetDouble();
}

inline Result<std::string> string(const Value& obj, const char* name, const std::string& where,
                                  bool required) {
  const Value* v = member(obj, name);
  if (!v || v->IsNull()) {
    if (required) return invalid_argument(where, ": '", name, "' is missing");
    return std::string();
  }
  if (!v->IsString()) return invalid_argument(where, ": '", name, "' is not a string");
  return std::string(v->GetString(), v->GetStringLength());
}

inline Result<int64_t> integer(const Value& obj, const char* name, const std::string& where,
                               int64_t fallback) {
  const Value* v = member(obj, name);
  if (!v || v->IsNull()) return fallback;
  if (!v->IsInt64()) return invalid_argument(where, ": '", name, "' is not an integer");
  return v->GetInt64();
}

}  // namespace osprey::bench::select::json
