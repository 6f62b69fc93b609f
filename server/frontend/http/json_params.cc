#include "frontend/http/json_params.h"

#include <limits>

namespace osprey::server::http {

const char* json_type_name(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType: return "bool";
    case rapidjson::kObjectType: return "object";
    case rapidjson::kArrayType: return "array";
    case rapidjson::kStringType: return "string";
    case rapidjson::kNumberType: return "number";
  }
  return "unknown";
}

const rapidjson::Value* find_member(const rapidjson::Value& obj, const char* key) {
  auto it = obj.FindMember(key);
  // Compared as pointers: RapidJSON 1.1's iterator operators are ambiguous under C++20 rules.
  return it.operator->() == obj.MemberEnd().operator->() ? nullptr : &it->value;
}

Status parse_parameters(const rapidjson::Value& json, const std::string& where, Parameters* out) {
  if (!json.IsObject())
    return invalid_argument(where, ": 'parameters' must be an object, got ", json_type_name(json));
  for (rapidjson::SizeType i = 0; i < json.MemberCount(); ++i) {
    const auto& member = json.MemberBegin()[i];
    std::string key(member.name.GetString(), member.name.GetStringLength());
    const rapidjson::Value& v = member.value;
    if (v.IsBool()) {
      (*out)[key] = v.GetBool();
    } else if (v.IsInt64()) {
      (*out)[key] = v.GetInt64();
    } else if (v.IsUint64()) {
      return invalid_argument(where, ": parameter '", key, "' is out of the int64 range");
    } else if (v.IsNumber()) {
      (*out)[key] = v.GetDouble();
    } else if (v.IsString()) {
      (*out)[key] = std::string(v.GetString(), v.GetStringLength());
    } else {
      return invalid_argument(where, ": parameter '", key,
                              "' must be a bool, number or string, got ", json_type_name(v));
    }
  }
  return Status::Ok();
}

void write_string(JsonWriter& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void write_parameters(JsonWriter& w, const Parameters& params) {
  w.StartObject();
  for (const auto& [key, value] : params) {
    write_string(w, key);
    if (const bool* b = std::get_if<bool>(&value)) {
      w.Bool(*b);
    } else if (const int64_t* i = std::get_if<int64_t>(&value)) {
      w.Int64(*i);
    } else if (const double* d = std::get_if<double>(&value)) {
      w.Double(*d);
    } else {
      write_string(w, std::get<std::string>(value));
    }
  }
  w.EndObject();
}

Result<bool> bool_parameter(const Parameters& params, const char* key, bool fallback,
                            const std::string& where) {
  auto it = params.find(key);
  if (it == params.end()) return fallback;
  if (const bool* b = std::get_if<bool>(&it->second)) return *b;
  return invalid_argument(where, ": parameter '", key, "' must be a bool");
}

}  // namespace osprey::server::http
