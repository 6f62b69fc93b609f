#include "frontend/http/tensor_json.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "osprey/dtype.h"

namespace osprey::server::http {
namespace {

enum class Kind { kBool, kU8, kU16, kU32, kU64, kI8, kI16, kI32, kI64, kF16, kBF16, kF32, kF64, kBytes };

bool kind_of(const std::string& datatype, Kind* out) {
  static constexpr std::pair<std::string_view, Kind> kKinds[] = {
      {"BOOL", Kind::kBool}, {"UINT8", Kind::kU8},   {"UINT16", Kind::kU16}, {"UINT32", Kind::kU32},
      {"UINT64", Kind::kU64}, {"INT8", Kind::kI8},   {"INT16", Kind::kI16},  {"INT32", Kind::kI32},
      {"INT64", Kind::kI64}, {"FP16", Kind::kF16},   {"BF16", Kind::kBF16},  {"FP32", Kind::kF32},
      {"FP64", Kind::kF64},  {"BYTES", Kind::kBytes},
  };
  for (const auto& [name, kind] : kKinds)
    if (name == datatype) {
      *out = kind;
      return true;
    }
  return false;
}

template <class T>
void append_pod(std::string* out, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  out->append(bytes, sizeof(T));
}

template <class T>
T read_pod(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// Converts one JSON element; `index` is its flat position, for messages.
class ElementWriter {
 public:
  ElementWriter(Kind kind, const std::string& datatype, const std::string& where, std::string* out)
      : kind_(kind), datatype_(datatype), where_(where), out_(out) {}

  Status put(const rapidjson::Value& v, int64_t index) {
    switch (kind_) {
      case Kind::kBool:
        if (!v.IsBool()) return type_error(v, index, "true or false");
        out_->push_back(v.GetBool() ? 1 : 0);
        return Status::Ok();
      case Kind::kU8: return put_int<uint8_t>(v, index);
      case Kind::kU16: return put_int<uint16_t>(v, index);
      case Kind::kU32: return put_int<uint32_t>(v, index);
      case Kind::kU64: return put_int<uint64_t>(v, index);
      case Kind::kI8: return put_int<int8_t>(v, index);
      case Kind::kI16: return put_int<int16_t>(v, index);
      case Kind::kI32: return put_int<int32_t>(v, index);
      case Kind::kI64: return put_int<int64_t>(v, index);
      case Kind::kF16:
        if (!v.IsNumber()) return type_error(v, index, "a number");
        append_pod(out_, Float16::from_float(static_cast<float>(v.GetDouble())));
        return Status::Ok();
      case Kind::kBF16:
        if (!v.IsNumber()) return type_error(v, index, "a number");
        append_pod(out_, BFloat16::from_float(static_cast<float>(v.GetDouble())));
        return Status::Ok();
      case Kind::kF32:
        if (!v.IsNumber()) return type_error(v, index, "a number");
        append_pod(out_, static_cast<float>(v.GetDouble()));
        return Status::Ok();
      case Kind::kF64:
        if (!v.IsNumber()) return type_error(v, index, "a number");
        append_pod(out_, v.GetDouble());
        return Status::Ok();
      case Kind::kBytes:
        if (!v.IsString()) return type_error(v, index, "a string");
        append_pod(out_, static_cast<uint32_t>(v.GetStringLength()));
        out_->append(v.GetString(), v.GetStringLength());
        return Status::Ok();
    }
    return internal_error(where_, ": unhandled datatype ", datatype_);
  }

 private:
  Status type_error(const rapidjson::Value& v, int64_t index, const char* expected) const {
    return invalid_argument(where_, ": data element ", index, " must be ", expected, " for ",
                            datatype_, ", got ", json_type_name(v));
  }

  template <class T>
  Status put_int(const rapidjson::Value& v, int64_t index) {
    using Lim = std::numeric_limits<T>;
    if (v.IsInt64()) {
      int64_t x = v.GetInt64();
      bool in_range = std::is_signed_v<T>
                          ? (x >= static_cast<int64_t>(Lim::min()) &&
                             x <= static_cast<int64_t>(Lim::max()))
                          : (x >= 0 && static_cast<uint64_t>(x) <= static_cast<uint64_t>(Lim::max()));
      if (!in_range)
        return invalid_argument(where_, ": data element ", index, " value ", x,
                                " is out of range for ", datatype_);
      append_pod(out_, static_cast<T>(x));
      return Status::Ok();
    }
    if (v.IsUint64()) {  // above INT64_MAX: only UINT64 holds it
      if (!std::is_same_v<T, uint64_t>)
        return invalid_argument(where_, ": data element ", index, " value ", v.GetUint64(),
                                " is out of range for ", datatype_);
      append_pod(out_, static_cast<T>(v.GetUint64()));
      return Status::Ok();
    }
    return type_error(v, index, "an integer");
  }

  Kind kind_;
  const std::string& datatype_;
  const std::string& where_;
  std::string* out_;
};

struct Walker {
  ElementWriter& writer;
  int64_t numel;
  int max_depth;
  const std::string& where;
  int64_t count = 0;

  Status walk(const rapidjson::Value& v, int depth) {
    if (v.IsArray()) {
      if (depth >= max_depth)
        return invalid_argument(where, ": 'data' is nested deeper than the tensor's rank allows (",
                                max_depth, ")");
      for (const auto& e : v.GetArray()) OSPREY_RETURN_IF_ERROR(walk(e, depth + 1));
      return Status::Ok();
    }
    if (depth == 0) return invalid_argument(where, ": 'data' must be an array, got ",
                                            json_type_name(v));
    if (count >= numel)
      return invalid_argument(where, ": 'data' has more than the ", numel,
                              " elements the shape holds");
    OSPREY_RETURN_IF_ERROR(writer.put(v, count));
    ++count;
    return Status::Ok();
  }
};

}  // namespace

Result<int64_t> checked_numel(const std::vector<int64_t>& shape, int64_t max_elements,
                              const std::string& where) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t d = shape[i];
    if (d < 0) return invalid_argument(where, ": shape dim ", i, " is negative (", d, ")");
    if (d != 0 && n > max_elements / d)
      return resource_exhausted(where, ": shape ", shape_string(shape), " has more than ",
                                max_elements, " elements (the per-tensor element limit)");
    n *= d;
  }
  if (n > max_elements)
    return resource_exhausted(where, ": shape ", shape_string(shape), " has more than ",
                              max_elements, " elements (the per-tensor element limit)");
  return n;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

Status json_to_raw(const rapidjson::Value& data, const std::string& datatype, int64_t numel,
                   int max_depth, const std::string& where, std::string* out) {
  Kind kind;
  if (!kind_of(datatype, &kind)) return invalid_argument(where, ": unknown datatype '", datatype, "'");
  int64_t size = datatype_size(datatype);
  out->reserve(out->size() + static_cast<size_t>(numel) * static_cast<size_t>(size ? size : 4));
  ElementWriter writer(kind, datatype, where, out);
  Walker walker{writer, numel, max_depth < 1 ? 1 : max_depth, where};
  OSPREY_RETURN_IF_ERROR(walker.walk(data, 0));
  if (walker.count != numel)
    return invalid_argument(where, ": 'data' has ", walker.count, " elements but the shape holds ",
                            numel);
  return Status::Ok();
}

Status check_raw_bytes(std::string_view raw, int64_t numel, const std::string& where) {
  size_t pos = 0;
  int64_t count = 0;
  while (pos < raw.size()) {
    if (raw.size() - pos < 4)
      return invalid_argument(where, ": BYTES element ", count, " has a truncated length prefix");
    uint32_t len = read_pod<uint32_t>(raw.data() + pos);
    pos += 4;
    if (raw.size() - pos < len)
      return invalid_argument(where, ": BYTES element ", count, " declares ", len,
                              " bytes but only ", raw.size() - pos, " remain");
    pos += len;
    ++count;
  }
  if (count != numel)
    return invalid_argument(where, ": BYTES data holds ", count, " elements but the shape holds ",
                            numel);
  return Status::Ok();
}

Status raw_to_json(std::string_view raw, const std::string& datatype, int64_t numel,
                   const std::string& where, JsonWriter& w) {
  Kind kind;
  if (!kind_of(datatype, &kind)) return internal_error(where, ": unknown datatype '", datatype, "'");
  if (kind == Kind::kBytes) {
    OSPREY_RETURN_IF_ERROR(check_raw_bytes(raw, numel, where));
    w.StartArray();
    for (size_t pos = 0; pos < raw.size();) {
      uint32_t len = read_pod<uint32_t>(raw.data() + pos);
      w.String(raw.data() + pos + 4, len);
      pos += 4 + len;
    }
    w.EndArray();
    return Status::Ok();
  }
  const int64_t size = datatype_size(datatype);
  if (static_cast<int64_t>(raw.size()) != numel * size)
    return internal_error(where, ": holds ", raw.size(), " bytes but ", numel, " ", datatype,
                          " elements need ", numel * size);
  const char* p = raw.data();
  w.StartArray();
  for (int64_t i = 0; i < numel; ++i, p += size) {
    switch (kind) {
      case Kind::kBool: w.Bool(*p != 0); break;
      case Kind::kU8: w.Uint(read_pod<uint8_t>(p)); break;
      case Kind::kU16: w.Uint(read_pod<uint16_t>(p)); break;
      case Kind::kU32: w.Uint(read_pod<uint32_t>(p)); break;
      case Kind::kU64: w.Uint64(read_pod<uint64_t>(p)); break;
      case Kind::kI8: w.Int(read_pod<int8_t>(p)); break;
      case Kind::kI16: w.Int(read_pod<int16_t>(p)); break;
      case Kind::kI32: w.Int(read_pod<int32_t>(p)); break;
      case Kind::kI64: w.Int64(read_pod<int64_t>(p)); break;
      case Kind::kF16: w.Double(Float16::to_float(read_pod<uint16_t>(p))); break;
      case Kind::kBF16: w.Double(BFloat16::to_float(read_pod<uint16_t>(p))); break;
      case Kind::kF32: w.Double(read_pod<float>(p)); break;
      case Kind::kF64: w.Double(read_pod<double>(p)); break;
      case Kind::kBytes: break;
    }
  }
  w.EndArray();
  return Status::Ok();
}

}  // namespace osprey::server::http
