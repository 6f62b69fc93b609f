#include "osprey/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "base/block_cache.h"

namespace osprey {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

std::string shape_to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {
constexpr size_t kAlign = 64;

std::shared_ptr<void> allocate_storage(DType dtype, int64_t numel, bool zero = true) {
  if (dtype == DType::kString) {
    auto* p = new std::string[static_cast<size_t>(numel > 0 ? numel : 1)];
    return std::shared_ptr<void>(p, [](void* q) { delete[] static_cast<std::string*>(q); });
  }
  size_t bytes = static_cast<size_t>(numel) * dtype_size(dtype);
  if (bytes == 0) bytes = kAlign;
  bytes = (bytes + kAlign - 1) / kAlign * kAlign;
  static_assert(kAlign == detail::kBlockAlign);
  void* p = detail::acquire_block(bytes);
  if (zero) std::memset(p, 0, bytes);
  return std::shared_ptr<void>(p, [bytes](void* q) { detail::release_block(q, bytes); });
}

Status check_shape(DType dtype, const Shape& shape, int64_t max_elements, int64_t* n) {
  if (!dtype_is_valid(dtype)) return invalid_argument("cannot create a tensor of type ", dtype_name(dtype));
  for (int64_t d : shape)
    if (d < 0) return invalid_argument("negative dimension in shape ", shape_to_string(shape));
  *n = shape_numel(shape);
  if (*n < 0) return resource_exhausted("shape ", shape_to_string(shape), " overflows int64 elements");
  if (max_elements > 0 && *n > max_elements)
    return resource_exhausted("shape ", shape_to_string(shape), " has ", *n,
                              " elements, above the limit of ", max_elements);
  return Status::Ok();
}
}  // namespace

size_t cached_memory_bytes() { return detail::cached_block_bytes(); }
void trim_memory() { detail::release_cached_blocks(); }

Tensor::Tensor(DType dtype, Shape shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = shape_numel(shape_);
  if (numel_ < 0) numel_ = 0;  // unchecked constructor: callers with untrusted sizes use create()
  storage_ = allocate_storage(dtype_, numel_);
  data_ = storage_.get();
}

Result<Tensor> Tensor::create(DType dtype, Shape shape, int64_t max_elements) {
  int64_t n = 0;
  OSPREY_RETURN_IF_ERROR(check_shape(dtype, shape, max_elements, &n));
  try {
    return Tensor(dtype, std::move(shape));
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory allocating ", n, " elements of ", dtype_name(dtype));
  }
}

Result<Tensor> Tensor::create_uninitialized(DType dtype, Shape shape, int64_t max_elements) {
  int64_t n = 0;
  OSPREY_RETURN_IF_ERROR(check_shape(dtype, shape, max_elements, &n));
  if (dtype == DType::kString) return Tensor(dtype, std::move(shape));
  try {
    Tensor t;
    t.dtype_ = dtype;
    t.shape_ = std::move(shape);
    t.numel_ = n;
    t.storage_ = allocate_storage(dtype, n, /*zero=*/false);
    t.data_ = t.storage_.get();
    return t;
  } catch (const std::bad_alloc&) {
    return resource_exhausted("out of memory allocating ", n, " elements of ", dtype_name(dtype));
  }
}

Result<int64_t> Tensor::checked_numel(DType dtype, const Shape& shape, int64_t max_elements) {
  int64_t n = 0;
  OSPREY_RETURN_IF_ERROR(check_shape(dtype, shape, max_elements, &n));
  return n;
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  if (t.numel_ < 0) t.numel_ = 0;
  t.storage_ = std::move(owner);
  t.data_ = data;
  return t;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor t = *this;
  t.shape_ = std::move(shape);
  t.numel_ = shape_numel(t.shape_);
  if (t.numel_ < 0) t.numel_ = 0;
  return t;
}

Tensor Tensor::clone() const {
  if (!defined()) return {};
  Tensor t(dtype_, shape_);
  if (dtype_ == DType::kString) {
    for (int64_t i = 0; i < numel_; ++i) t.data<std::string>()[i] = data<std::string>()[i];
  } else if (numel_ > 0) {
    std::memcpy(t.data_, data_, nbytes());
  }
  return t;
}

double Tensor::get_as_double(int64_t i) const {
  switch (dtype_) {
    case DType::kFloat32: return data<float>()[i];
    case DType::kFloat64: return data<double>()[i];
    case DType::kFloat16: return static_cast<float>(data<Float16>()[i]);
    case DType::kBFloat16: return static_cast<float>(data<BFloat16>()[i]);
    case DType::kInt8: return data<int8_t>()[i];
    case DType::kInt16: return data<int16_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kInt64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kUInt8: return data<uint8_t>()[i];
    case DType::kUInt16: return data<uint16_t>()[i];
    case DType::kUInt32: return data<uint32_t>()[i];
    case DType::kUInt64: return static_cast<double>(data<uint64_t>()[i]);
    case DType::kBool: return data<bool>()[i] ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t Tensor::get_as_int64(int64_t i) const {
  switch (dtype_) {
    case DType::kInt64: return data<int64_t>()[i];
    case DType::kInt32: return data<int32_t>()[i];
    case DType::kUInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    default: {
      const double d = get_as_double(i);
      if (!(d >= -9.2e18 && d <= 9.2e18)) return d > 0 ? std::numeric_limits<int64_t>::max()
                                                         : std::numeric_limits<int64_t>::min();
      return static_cast<int64_t>(d);
    }
  }
}

std::vector<int64_t> Tensor::to_int64_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[static_cast<size_t>(i)] = get_as_int64(i);
  return v;
}

std::string Tensor::debug_string() const {
  return std::string(dtype_name(dtype_)) + shape_to_string(shape_);
}

}  // namespace osprey
