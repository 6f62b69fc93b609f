// Helpers for the shape and data-movement kernels (shape_ops, layout_ops, slice_ops,
// gather_scatter, dropout): type-erased element copies and integer-input readers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref::tensor_ops {

// Copies elements that are N bytes of trivially copyable data (every dtype but string).
// Data-movement kernels only move elements, so they dispatch on element size, not type.
template <size_t N>
struct RawElem {
  static void copy(void* dst, int64_t di, const void* src, int64_t si) {
    std::memcpy(static_cast<unsigned char*>(dst) + di * static_cast<int64_t>(N),
                static_cast<const unsigned char*>(src) + si * static_cast<int64_t>(N), N);
  }
  static void copy_n(void* dst, int64_t di, const void* src, int64_t si, int64_t n) {
    if (n <= 0) return;
    std::memcpy(static_cast<unsigned char*>(dst) + di * static_cast<int64_t>(N),
                static_cast<const unsigned char*>(src) + si * static_cast<int64_t>(N),
                static_cast<size_t>(n) * N);
  }
};

struct StringElem {
  static void copy(void* dst, int64_t di, const void* src, int64_t si) {
    static_cast<std::string*>(dst)[di] = static_cast<const std::string*>(src)[si];
  }
  static void copy_n(void* dst, int64_t di, const void* src, int64_t si, int64_t n) {
    if (n <= 0) return;
    std::copy_n(static_cast<const std::string*>(src) + si, n, static_cast<std::string*>(dst) + di);
  }
};

// Calls f.template operator()<E>() with E the copier for `dtype` (RawElem<size> or StringElem).
template <class F>
Status dispatch_elem(DType dtype, const char* what, F&& f) {
  if (!dtype_is_valid(dtype))
    return invalid_argument(what, ": unsupported element type ", dtype_name(dtype));
  if (dtype == DType::kString) return f.template operator()<StringElem>();
  switch (dtype_size(dtype)) {
    case 1: return f.template operator()<RawElem<1>>();
    case 2: return f.template operator()<RawElem<2>>();
    case 4: return f.template operator()<RawElem<4>>();
    case 8: return f.template operator()<RawElem<8>>();
    default: break;
  }
  return invalid_argument(what, ": unsupported element type ", dtype_name(dtype));
}

// dst[i], i row-major over `shape`, = src[base + sum_d idx_d * strides[d]].
// Strides may be zero (broadcast) or negative (reversed slices); the caller guarantees
// every addressed element is inside src.
// Dimensions that read on where the next one ends (strides[d] == shape[d+1] * strides[d+1])
// are merged first, so that a slice of whole rows, or of whole channel planes, copies long
// runs rather than one row at a time.
template <class E>
void copy_strided(void* dst, const void* src, int64_t base, const Shape& in_shape,
                  const std::vector<int64_t>& in_strides) {
  const int64_t n = shape_numel(in_shape);
  if (n <= 0) return;
  if (in_shape.empty()) {
    E::copy(dst, 0, src, base);
    return;
  }
  Shape shape = {in_shape.back()};
  std::vector<int64_t> strides = {in_strides.back()};
  for (size_t d = in_shape.size() - 1; d-- > 0;) {
    if (in_shape[d] == 1) continue;
    if (in_strides[d] == shape.front() * strides.front()) {
      shape.front() *= in_shape[d];
    } else {
      shape.insert(shape.begin(), in_shape[d]);
      strides.insert(strides.begin(), in_strides[d]);
    }
  }
  const size_t r = shape.size();
  const int64_t inner = shape[r - 1], inner_stride = strides[r - 1];
  std::vector<int64_t> idx(r - 1, 0);
  int64_t offset = base;
  for (int64_t o = 0; o < n; o += inner) {
    if (inner_stride == 1) {
      E::copy_n(dst, o, src, offset, inner);
    } else {
      for (int64_t j = 0; j < inner; ++j) E::copy(dst, o + j, src, offset + j * inner_stride);
    }
    for (size_t d = r - 1; d-- > 0;) {  // advance the outer index
      if (++idx[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

// Product of shape[lo, hi).
inline int64_t dims_product(const Shape& s, size_t lo, size_t hi) {
  int64_t p = 1;
  for (size_t i = lo; i < hi && i < s.size(); ++i) p *= s[i];
  return p;
}

// Reads integer input i (any integer dtype) as int64 values; `name` is used in errors.
inline Status read_int_input(const KernelContext& ctx, int i, const char* name,
                             std::vector<int64_t>* out) {
  if (!ctx.has_input(i)) return invalid_argument("input '", name, "' is required");
  if (!ctx.input_value(i).is_tensor()) return invalid_argument("input '", name, "' must be a tensor");
  const Tensor& t = ctx.input(i);
  if (!dtype_is_integer(t.dtype()))
    return invalid_argument("input '", name, "' must be an integer tensor, got ",
                            dtype_name(t.dtype()));
  if (t.rank() > 1)
    return invalid_argument("input '", name, "' must be 1-D, got shape ", shape_to_string(t.shape()));
  *out = t.to_int64_vector();
  return Status::Ok();
}

// Reads an integer scalar (or 1-element) input.
inline Status read_int_scalar(const KernelContext& ctx, int i, const char* name, int64_t* out) {
  if (!ctx.has_input(i)) return invalid_argument("input '", name, "' is required");
  const Tensor& t = ctx.input(i);
  if (!dtype_is_integer(t.dtype()))
    return invalid_argument("input '", name, "' must be an integer tensor, got ",
                            dtype_name(t.dtype()));
  if (t.numel() != 1)
    return invalid_argument("input '", name, "' must hold one value, got shape ",
                            shape_to_string(t.shape()));
  *out = t.get_as_int64(0);
  return Status::Ok();
}

// Reads an index tensor (int32 or int64) element as int64.
inline int64_t index_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

inline Status require_index_dtype(const Tensor& t, const char* name) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64)
    return invalid_argument("input '", name, "' must be int32 or int64, got ", dtype_name(t.dtype()));
  return Status::Ok();
}

// Maps index v into [0, n) allowing negatives in [-n, 0); error otherwise.
inline Status wrap_index(int64_t v, int64_t n, const char* what, int64_t* out) {
  if (v < -n || v >= n)
    return invalid_argument(what, " index ", v, " is out of range for a dimension of size ", n);
  *out = v < 0 ? v + n : v;
  return Status::Ok();
}

// Input coordinate for output coordinate o on an axis of input size n with `begin`
// padding; -1 means "use the constant". Modes: 0 constant, 1 reflect, 2 edge, 3 wrap (Pad's).
inline int64_t pad_source(int64_t o, int64_t begin, int64_t n, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case 0: return -1;  // constant
    case 1: {           // reflect (mirror without repeating the edge)
      if (n == 1) return 0;
      const int64_t period = 2 * (n - 1);
      i %= period;
      if (i < 0) i += period;
      return i < n ? i : period - i;
    }
    case 2: return i < 0 ? 0 : n - 1;  // edge
    default: {                          // wrap
      i %= n;
      return i < 0 ? i + n : i;
    }
  }
}

}  // namespace osprey::ref::tensor_ops
