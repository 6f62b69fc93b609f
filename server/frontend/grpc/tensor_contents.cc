#include "frontend/grpc/tensor_contents.h"

#include <bit>
#include <cstring>
#include <limits>
#include <sstream>
#include <utility>

#include "api/types.h"

namespace osprey::server::grpc_frontend {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw tensor bytes are little-endian; a big-endian host needs byte swapping here");

using Contents = inference::InferTensorContents;

enum class Field { kBool, kInt, kInt64, kUint, kUint64, kFp32, kFp64, kBytes, kNone };
constexpr Field kAllFields[] = {Field::kBool,   Field::kInt,  Field::kInt64, Field::kUint,
                                Field::kUint64, Field::kFp32, Field::kFp64,  Field::kBytes};

Field field_for(const std::string& dt) {
  if (dt == "BOOL") return Field::kBool;
  if (dt == "INT8" || dt == "INT16" || dt == "INT32") return Field::kInt;
  if (dt == "INT64") return Field::kInt64;
  if (dt == "UINT8" || dt == "UINT16" || dt == "UINT32") return Field::kUint;
  if (dt == "UINT64") return Field::kUint64;
  if (dt == "FP32") return Field::kFp32;
  if (dt == "FP64") return Field::kFp64;
  if (dt == "BYTES") return Field::kBytes;
  return Field::kNone;  // FP16, BF16: raw only
}

const char* field_name(Field f) {
  switch (f) {
    case Field::kBool: return "bool_contents";
    case Field::kInt: return "int_contents";
    case Field::kInt64: return "int64_contents";
    case Field::kUint: return "uint_contents";
    case Field::kUint64: return "uint64_contents";
    case Field::kFp32: return "fp32_contents";
    case Field::kFp64: return "fp64_contents";
    case Field::kBytes: return "bytes_contents";
    case Field::kNone: break;
  }
  return "(none)";
}

int value_count(const Contents& c, Field f) {
  switch (f) {
    case Field::kBool: return c.bool_contents_size();
    case Field::kInt: return c.int_contents_size();
    case Field::kInt64: return c.int64_contents_size();
    case Field::kUint: return c.uint_contents_size();
    case Field::kUint64: return c.uint64_contents_size();
    case Field::kFp32: return c.fp32_contents_size();
    case Field::kFp64: return c.fp64_contents_size();
    case Field::kBytes: return c.bytes_contents_size();
    case Field::kNone: break;
  }
  return 0;
}

// Values of a same-sized type: one block copy.
template <class T>
std::string pack_exact(const google::protobuf::RepeatedField<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

// Values narrowed to T, each checked against T's range.
template <class T, class Src>
Result<std::string> pack_narrowed(const google::protobuf::RepeatedField<Src>& values,
                                  const std::string& datatype, const std::string& tensor) {
  std::string raw(values.size() * sizeof(T), '\0');
  char* dst = raw.data();
  for (int i = 0; i < values.size(); ++i) {
    const Src v = values.Get(i);
    if (!std::in_range<T>(v))
      return invalid_argument(tensor, ": value ", v, " at index ", i, " is out of range for ",
                              datatype);
    const T t = static_cast<T>(v);
    std::memcpy(dst + i * sizeof(T), &t, sizeof(T));
  }
  return raw;
}

void append_length_prefixed(const std::string& element, std::string* out) {
  const auto len = static_cast<uint32_t>(element.size());
  char prefix[4];
  std::memcpy(prefix, &len, 4);
  out->append(prefix, 4);
  out->append(element);
}

Result<std::string> pack_bytes(const google::protobuf::RepeatedPtrField<std::string>& values,
                               const std::string& tensor) {
  size_t total = 0;
  for (int i = 0; i < values.size(); ++i) {
    if (values.Get(i).size() > std::numeric_limits<uint32_t>::max())
      return invalid_argument(tensor, ": BYTES element ", i, " is longer than 4 GiB");
    total += 4 + values.Get(i).size();
  }
  std::string raw;
  raw.reserve(total);
  for (const std::string& v : values) append_length_prefixed(v, &raw);
  return raw;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

}  // namespace

Result<int64_t> checked_element_count(const std::vector<int64_t>& shape, int64_t max_elements,
                                      const std::string& tensor) {
  bool empty = false;
  for (int64_t d : shape) {
    if (d < 0)
      return invalid_argument(tensor, ": negative dimension ", d, " in shape ",
                              shape_string(shape));
    if (d == 0) empty = true;
  }
  if (empty) return int64_t{0};
  int64_t n = 1;
  for (int64_t d : shape) {
    if (n > max_elements / d)
      return resource_exhausted(tensor, ": shape ", shape_string(shape), " has more than ",
                                max_elements, " elements (limit max_tensor_elements)");
    n *= d;
  }
  return n;
}

bool has_typed_values(const Contents& contents) {
  for (Field f : kAllFields)
    if (value_count(contents, f) > 0) return true;
  return false;
}

Result<std::string> typed_contents_to_raw(const Contents& c, const std::string& datatype,
                                          int64_t elements, const std::string& tensor) {
  const Field own = field_for(datatype);
  if (own == Field::kNone)
    return invalid_argument(tensor, ": datatype ", datatype,
                            " has no typed contents field; send it in raw_input_contents");
  for (Field f : kAllFields) {
    if (f != own && value_count(c, f) > 0)
      return invalid_argument(tensor, ": contents.", field_name(f), " is set but datatype ",
                              datatype, " uses contents.", field_name(own));
  }
  if (value_count(c, own) != elements)
    return invalid_argument(tensor, ": contents.", field_name(own), " holds ", value_count(c, own),
                            " values but the shape needs ", elements);
  if (datatype == "BOOL") {
    std::string raw(c.bool_contents_size(), '\0');
    for (int i = 0; i < c.bool_contents_size(); ++i) raw[i] = c.bool_contents(i) ? 1 : 0;
    return raw;
  }
  if (datatype == "INT8") return pack_narrowed<int8_t>(c.int_contents(), datatype, tensor);
  if (datatype == "INT16") return pack_narrowed<int16_t>(c.int_contents(), datatype, tensor);
  if (datatype == "INT32") return pack_exact(c.int_contents());
  if (datatype == "INT64") return pack_exact(c.int64_contents());
  if (datatype == "UINT8") return pack_narrowed<uint8_t>(c.uint_contents(), datatype, tensor);
  if (datatype == "UINT16") return pack_narrowed<uint16_t>(c.uint_contents(), datatype, tensor);
  if (datatype == "UINT32") return pack_exact(c.uint_contents());
  if (datatype == "UINT64") return pack_exact(c.uint64_contents());
  if (datatype == "FP32") return pack_exact(c.fp32_contents());
  if (datatype == "FP64") return pack_exact(c.fp64_contents());
  return pack_bytes(c.bytes_contents(), tensor);  // BYTES: the only datatype left
}

Status check_raw_contents(const std::string& raw, const std::string& datatype, int64_t elements,
                          const std::string& tensor) {
  if (datatype != "BYTES") {
    const int64_t want = elements * datatype_size(datatype);
    if (static_cast<int64_t>(raw.size()) != want)
      return invalid_argument(tensor, ": raw contents hold ", raw.size(), " bytes but ", elements,
                              " ", datatype, " elements need ", want);
    return Status::Ok();
  }
  size_t offset = 0;
  int64_t count = 0;
  while (offset < raw.size()) {
    if (raw.size() - offset < 4)
      return invalid_argument(tensor, ": BYTES element ", count,
                              " is cut off inside its 4-byte length prefix");
    uint32_t len = 0;
    std::memcpy(&len, raw.data() + offset, 4);
    offset += 4;
    if (len > raw.size() - offset)
      return invalid_argument(tensor, ": BYTES element ", count, " claims ", len,
                              " bytes but only ", raw.size() - offset, " remain");
    offset += len;
    ++count;
  }
  if (count != elements)
    return invalid_argument(tensor, ": raw contents hold ", count,
                            " BYTES elements but the shape needs ", elements);
  return Status::Ok();
}

}  // namespace osprey::server::grpc_frontend
