// TensorProto (inline, raw and external data) -> Tensor.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/large_pages.h"
#include "onnx/onnx_internal.h"

namespace osprey::onnx_import {

Result<std::string> read_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return not_found("file not found or not a regular file: ", path);
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("cannot open ", path);
  std::ostringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return invalid_argument("error reading ", path);
  return ss.str();
}

namespace {

Result<DType> convert_dtype(int32_t t) {
  const DType d = static_cast<DType>(t);
  if (!dtype_is_valid(d)) {
    if (t == 14 || t == 15) return unimplemented("complex tensors are not supported");
    return invalid_argument("unsupported tensor element type ", t);
  }
  return d;
}

template <class T, class Src>
Status copy_typed(const Src& src, Tensor* t, const char* field) {
  if (static_cast<int64_t>(src.size()) != t->numel())
    return invalid_argument("tensor has ", src.size(), " values in ", field, " but its shape ",
                            shape_to_string(t->shape()), " needs ", t->numel());
  T* out = t->data<T>();
  for (int64_t i = 0; i < t->numel(); ++i) {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      out[i].bits = static_cast<uint16_t>(src.Get(static_cast<int>(i)));
    } else {
      out[i] = static_cast<T>(src.Get(static_cast<int>(i)));
    }
  }
  return Status::Ok();
}

Status fill_from_fields(const onnx::TensorProto& p, Tensor* t) {
  switch (t->dtype()) {
    case DType::kFloat32: return copy_typed<float>(p.float_data(), t, "float_data");
    case DType::kFloat64: return copy_typed<double>(p.double_data(), t, "double_data");
    case DType::kInt64: return copy_typed<int64_t>(p.int64_data(), t, "int64_data");
    case DType::kUInt32: return copy_typed<uint32_t>(p.uint64_data(), t, "uint64_data");
    case DType::kUInt64: return copy_typed<uint64_t>(p.uint64_data(), t, "uint64_data");
    case DType::kInt32: return copy_typed<int32_t>(p.int32_data(), t, "int32_data");
    case DType::kInt16: return copy_typed<int16_t>(p.int32_data(), t, "int32_data");
    case DType::kInt8: return copy_typed<int8_t>(p.int32_data(), t, "int32_data");
    case DType::kUInt16: return copy_typed<uint16_t>(p.int32_data(), t, "int32_data");
    case DType::kUInt8: return copy_typed<uint8_t>(p.int32_data(), t, "int32_data");
    case DType::kBool: return copy_typed<bool>(p.int32_data(), t, "int32_data");
    case DType::kFloat16: return copy_typed<Float16>(p.int32_data(), t, "int32_data");
    case DType::kBFloat16: return copy_typed<BFloat16>(p.int32_data(), t, "int32_data");
    case DType::kString: {
      if (p.string_data_size() != t->numel())
        return invalid_argument("string tensor has ", p.string_data_size(), " values, shape needs ",
                                t->numel());
      for (int64_t i = 0; i < t->numel(); ++i)
        t->data<std::string>()[i] = p.string_data(static_cast<int>(i));
      return Status::Ok();
    }
    default: return invalid_argument("unsupported element type ", dtype_name(t->dtype()));
  }
}

Status check_raw_size(size_t n, const Tensor& t) {
  if (t.dtype() == DType::kString) return invalid_argument("string tensors cannot use raw_data");
  if (n != t.nbytes())
    return invalid_argument("tensor raw data has ", n, " bytes but its shape ",
                            shape_to_string(t.shape()), " of ", dtype_name(t.dtype()), " needs ",
                            t.nbytes());
  return Status::Ok();
}

void normalize_bools(Tensor* t) {  // 0/1 only, so bool loads are well defined
  if (t->dtype() != DType::kBool) return;
  auto* b = static_cast<uint8_t*>(t->raw_data());
  for (size_t i = 0; i < t->nbytes(); ++i) b[i] = b[i] ? 1 : 0;
}

Status fill_from_bytes(const char* bytes, size_t n, Tensor* t) {
  OSPREY_RETURN_IF_ERROR(check_raw_size(n, *t));
  if (n) std::memcpy(t->raw_data(), bytes, n);
  normalize_bools(t);
  return Status::Ok();
}

Status fill_from_file(const RawDataInFile& raw, Tensor* t) {
  OSPREY_RETURN_IF_ERROR(check_raw_size(static_cast<size_t>(raw.length), *t));
  auto* out = static_cast<char*>(t->raw_data());
  if (raw.length >= 2 * static_cast<int64_t>(kLargePageBytes)) advise_large_pages(out, static_cast<size_t>(raw.length));
  int64_t done = 0;
  while (done < raw.length) {
    const ssize_t got = ::pread(raw.fd, out + done, static_cast<size_t>(raw.length - done),
                                static_cast<off_t>(raw.offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return invalid_argument("error reading raw data at offset ", raw.offset + done, ": ",
                              got < 0 ? std::strerror(errno) : "unexpected end of file");
    done += got;
  }
  normalize_bools(t);
  return Status::Ok();
}

Status fill_from_external(const onnx::TensorProto& p, const std::string& dir, Tensor* t) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : p.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoll(kv.value());
      else if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (...) {
      return invalid_argument("external data field '", kv.key(), "' is not a number: ", kv.value());
    }
  }
  if (location.empty()) return invalid_argument("external data without a location");
  const std::filesystem::path rel(location);
  if (rel.is_absolute()) return invalid_argument("external data location must be relative: ", location);
  for (const auto& part : rel)
    if (part == "..") return invalid_argument("external data location leaves the model directory: ", location);
  const std::string path = (std::filesystem::path(dir.empty() ? "." : dir) / rel).string();
  std::ifstream f(path, std::ios::binary);
  if (!f) return not_found("external data file not found: ", path);
  f.seekg(0, std::ios::end);
  const int64_t size = static_cast<int64_t>(f.tellg());
  const int64_t want = length >= 0 ? length : static_cast<int64_t>(t->nbytes());
  if (offset < 0 || want < 0 || offset > size || want > size - offset)
    return invalid_argument("external data file ", path, " has ", size, " bytes; cannot read ", want,
                            " bytes at offset ", offset);
  OSPREY_RETURN_IF_ERROR(check_raw_size(static_cast<size_t>(want), *t));
  f.seekg(offset);
  f.read(static_cast<char*>(t->raw_data()), want);  // straight into the tensor
  if (!f) return invalid_argument("error reading external data file ", path);
  normalize_bools(t);
  return Status::Ok();
}

}  // namespace

Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const std::string& dir,
                                 int64_t max_elements, const RawDataInFile* raw_in_file) {
  const std::string what = p.name().empty() ? std::string("tensor") : "tensor '" + p.name() + "'";
  if (p.has_segment()) return unimplemented(what, ": segmented tensors are not supported");
  auto dt = convert_dtype(p.data_type());
  if (!dt.ok()) return dt.status().with_context(what);
  Shape shape(p.dims().begin(), p.dims().end());
  // Every fill below writes each element or fails, so the storage need not be zeroed first.
  auto t = Tensor::create_uninitialized(*dt, shape, max_elements);
  if (!t.ok()) return t.status().with_context(what);
  Status s;
  if (p.data_location() == onnx::TensorProto::EXTERNAL) {
    s = fill_from_external(p, dir, &t.value());
  } else if (raw_in_file) {
    s = fill_from_file(*raw_in_file, &t.value());
  } else if (p.has_raw_data()) {
    s = fill_from_bytes(p.raw_data().data(), p.raw_data().size(), &t.value());
  } else {
    s = fill_from_fields(p, &t.value());
  }
  if (!s.ok()) return s.with_context(what);
  return t;
}

namespace {
template <class Field>
void free_field(Field* f) {
  Field().Swap(f);  // Clear() would keep the capacity
}
}  // namespace

void release_tensor_payload(onnx::TensorProto* p) {
  if (p->has_raw_data()) {
    std::string().swap(*p->mutable_raw_data());
    p->clear_raw_data();
  }
  free_field(p->mutable_float_data());
  free_field(p->mutable_double_data());
  free_field(p->mutable_int32_data());
  free_field(p->mutable_int64_data());
  free_field(p->mutable_uint64_data());
  free_field(p->mutable_string_data());
}

Result<Tensor> take_tensor_from_proto(onnx::TensorProto* p, const std::string& dir,
                                      int64_t max_elements) {
  auto t = tensor_from_proto(*p, dir, max_elements);
  if (t.ok()) release_tensor_payload(p);
  return t;
}

Result<Tensor> parse_tensor(const std::string& bytes, const std::string& dir, int64_t max_elements) {
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) return invalid_argument("not a valid serialized TensorProto");
  return tensor_from_proto(p, dir, max_elements);
}

}  // namespace osprey::onnx_import
