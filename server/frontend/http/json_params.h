// KServe v2 "parameters" objects <-> Parameters, and the small RapidJSON helpers the codecs share.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>

#include "api/types.h"
#include "osprey/status.h"

namespace osprey::server::http {

// NaN and infinities are written as NaN / Infinity / -Infinity (what Python's json and
// tritonclient accept) instead of failing the whole response.
using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                                     rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>;

// Parses a JSON "parameters" object. `where` names its owner in error messages
// ("request", "input 'x'", ...). Values must be bool, integer, number or string.
Status parse_parameters(const rapidjson::Value& json, const std::string& where, Parameters* out);
void write_parameters(JsonWriter& w, const Parameters& params);
void write_string(JsonWriter& w, const std::string& s);

// The member `key` of object `obj`, or nullptr.
const rapidjson::Value* find_member(const rapidjson::Value& obj, const char* key);

// Human name of a JSON value's type, for error messages.
const char* json_type_name(const rapidjson::Value& v);

// Reads an optional bool parameter; a value of another type is an error naming it.
Result<bool> bool_parameter(const Parameters& params, const char* key, bool fallback,
                            const std::string& where);

}  // namespace osprey::server::http
