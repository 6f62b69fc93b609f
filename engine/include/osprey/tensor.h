// A dense, row-major tensor with shared, reference-counted storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "osprey/dtype.h"
#include "osprey/status.h"

namespace osprey {

using Shape = std::vector<int64_t>;

// Number of elements of a shape; -1 if it overflows int64 or a dim is negative.
int64_t shape_numel(const Shape& shape);
std::string shape_to_string(const Shape& shape);  // "[1,3,224,224]"

// Tensor buffers of 1 MiB and more are kept for reuse when released (up to 512 MiB in all),
// so that a model run again and again does not map and fault in its large intermediates
// every time. cached_memory_bytes() is what is held now; trim_memory() gives it all back.
size_t cached_memory_bytes();
void trim_memory();

class Tensor {
 public:
  Tensor() = default;  // undefined tensor (defined() == false)
  // Allocates zero-filled storage (empty strings for kString). Aborts never:
  // callers that take sizes from untrusted input use Tensor::create, which checks.
  Tensor(DType dtype, Shape shape);
  // Checked allocation: refuses negative dims, overflow, and more than max_elements.
  static Result<Tensor> create(DType dtype, Shape shape, int64_t max_elements);
  // As create(), without zero-filling: for writers that set every element.
  static Result<Tensor> create_uninitialized(DType dtype, Shape shape, int64_t max_elements);
  // The checks create() makes, without allocating: the element count, or the same error.
  static Result<int64_t> checked_numel(DType dtype, const Shape& shape, int64_t max_elements);
  // Wraps memory owned elsewhere; `owner` keeps it alive (may be null for borrowed memory
  // that outlives the tensor).
  static Tensor wrap(DType dtype, Shape shape, void* data, std::shared_ptr<void> owner);
  // A 0-d tensor holding one value.
  template <class T>
  static Tensor scalar(T v) {
    Tensor t(dtype_v<T>, {});
    *t.data<T>() = v;
    return t;
  }
  // A 1-d tensor from values.
  template <class T>
  static Tensor from_vector(const std::vector<T>& v) {
    Tensor t(dtype_v<T>, {static_cast<int64_t>(v.size())});
    for (size_t i = 0; i < v.size(); ++i) t.data<T>()[i] = v[i];
    return t;
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(dtype_); }

  template <class T>
  T* data() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data() const {
    return static_cast<const T*>(data_);
  }
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }

  // Same storage, new shape (numel must match; checked by the caller).
  Tensor reshaped(Shape shape) const;
  // True when this tensor holds the only reference to storage it shares in ownership (not
  // borrowed memory wrapped without an owner): no other tensor or view can see a write to it.
  bool sole_owner() const { return storage_ != nullptr && storage_.use_count() == 1; }
  // Deep copy.
  Tensor clone() const;
  // Element i converted to double / int64 (for shape tensors and small scalar inputs).
  double get_as_double(int64_t i) const;
  int64_t get_as_int64(int64_t i) const;
  // All elements as int64 (for shape-like inputs: Reshape's shape, Slice's starts, ...).
  std::vector<int64_t> to_int64_vector() const;

  std::string debug_string() const;  // "float32[1,3]"

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  int64_t numel_ = 0;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

// A value flowing through a graph: a tensor, a sequence of tensors, or an empty optional.
struct Value {
  enum class Kind { kNone, kTensor, kSequence };
  Kind kind = Kind::kNone;
  Tensor tensor;
  std::vector<Tensor> sequence;
  // Element type of the sequence when it is empty (from type info), else kUndefined.
  DType sequence_dtype = DType::kUndefined;

  Value() = default;
  Value(Tensor t) : kind(Kind::kTensor), tensor(std::move(t)) {}  // NOLINT
  static Value make_sequence(std::vector<Tensor> s, DType elem = DType::kUndefined) {
    Value v;
    v.kind = Kind::kSequence;
    v.sequence = std::move(s);
    v.sequence_dtype = elem;
    return v;
  }
  bool is_tensor() const { return kind == Kind::kTensor; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_none() const { return kind == Kind::kNone; }
};

}  // namespace osprey
