// Shared helpers for reference kernels: dtype dispatch, axes, broadcasting, strides.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/kernel.h"
#include "osprey/dtype.h"
#include "osprey/status.h"
#include "osprey/tensor.h"

namespace osprey::ref {

// Arithmetic is done in `compute_t<T>`: float for the 16-bit floats, T otherwise.
template <class T>
struct compute_type {
  using type = T;
};
template <>
struct compute_type<Float16> {
  using type = float;
};
template <>
struct compute_type<BFloat16> {
  using type = float;
};
template <class T>
using compute_t = typename compute_type<T>::type;

template <class T>
inline constexpr bool is_float_v =
    std::is_floating_point_v<T> || std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Converts any supported scalar to T (16-bit floats through float).
template <class T, class U>
inline T cast_to(U v) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_same_v<U, Float16> || std::is_same_v<U, BFloat16>) {
    return static_cast<T>(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// Type lists for dispatch.
template <class... Ts>
struct TypeList {};
using FloatTypes = TypeList<float, double, Float16, BFloat16>;
using IntTypes = TypeList<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                              uint8_t, uint16_t, uint32_t, uint64_t>;
using NumericBoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t,
                                  int64_t, uint8_t, uint16_t, uint32_t, uint64_t, bool>;
using AllTypes = TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t,
                          uint8_t, uint16_t, uint32_t, uint64_t, bool, std::string>;

// Calls f.template operator()<T>() for the T in `List` matching `dtype`.
// Returns an InvalidArgument status naming the dtype when it is not in the list.
// `f` must return Status.
//   return dispatch<FloatTypes>(x.dtype(), "Relu", [&]<class T>() { ...; return Status::Ok(); });
template <class List, class F>
Status dispatch(DType dtype, const char* what, F&& f);

namespace detail {
template <class F, class T, class... Rest>
Status dispatch_impl(DType dtype, const char* what, F& f) {
  if (dtype == dtype_v<T>) return f.template operator()<T>();
  if constexpr (sizeof...(Rest) > 0) {
    return dispatch_impl<F, Rest...>(dtype, what, f);
  } else {
    return invalid_argument(what, ": unsupported element type ", dtype_name(dtype));
  }
}
template <class List>
struct Dispatcher;
template <class... Ts>
struct Dispatcher<TypeList<Ts...>> {
  template <class F>
  static Status run(DType dtype, const char* what, F& f) {
    return dispatch_impl<F, Ts...>(dtype, what, f);
  }
};
}  // namespace detail

template <class List, class F>
Status dispatch(DType dtype, const char* what, F&& f) {
  return detail::Dispatcher<List>::run(dtype, what, f);
}

// Maps a possibly negative axis into [0, rank). Error names the op and the value.
Status normalize_axis(int64_t axis, int64_t rank, int64_t* out, const char* what = "axis");
// Normalizes a list of axes; rejects duplicates.
Status normalize_axes(std::vector<int64_t>* axes, int64_t rank, const char* what = "axes");

// Row-major strides of a shape (in elements).
std::vector<int64_t> strides_of(const Shape& shape);

// Numpy-style multidirectional broadcasting of several shapes.
Status broadcast_shapes(const std::vector<Shape>& shapes, Shape* out);

// Strides of `in` broadcast to `out` (0 on broadcast dims); `in` is right-aligned.
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

// Iterates over a shape in row-major order, tracking offsets into several
// strided operands. Used for broadcasting and transposes:
//   StridedIter it(out_shape, {strides_a, strides_b});
//   for (int64_t i = 0; i < n; ++i, it.next()) out[i] = a[it.offset(0)] + b[it.offset(1)];
class StridedIter {
 public:
  StridedIter(const Shape& shape, std::vector<std::vector<int64_t>> strides);
  int64_t offset(size_t operand) const { return offsets_[operand]; }
  void next();

 private:
  Shape shape_;
  std::vector<std::vector<int64_t>> strides_;
  std::vector<int64_t> index_;
  std::vector<int64_t> offsets_;
};

// The Softmax family's view of its input as [outer, n, inner], the op running along n: before
// opset 13 the dims from `axis` (default 1) are flattened into n; from 13 n is the one axis
// `axis` (default -1). softmax.cc; shared with the oneDNN Softmax.
struct SoftmaxView {
  int64_t outer = 1, n = 1, inner = 1;
};
Status softmax_view(const KernelContext& ctx, const Tensor& x, SoftmaxView* v);
// The same view for a given opset and axis (QLinearSoftmax carries the opset as an attribute).
Status softmax_view(const Tensor& x, int64_t opset, int64_t axis_attr, SoftmaxView* v);

// A copy of `x` with its dims permuted (out dim i is x's dim perm[i]); any dtype but string.
// layout_ops.cc (the reference Transpose's own copy).
Result<Tensor> transposed(const Tensor& x, const std::vector<int64_t>& perm);

// Transpose's `perm` for a tensor of `rank` (reversed dims when absent), checked to be a
// permutation (layout_ops.cc; shared with the oneDNN Transpose).
Status transpose_perm(const KernelContext& ctx, int64_t rank, std::vector<int64_t>* perm);

// Checks that input i is present and is a tensor of rank in [lo, hi].
Status require_rank(const KernelContext& ctx, int i, int64_t lo, int64_t hi);
// Checks that inputs a and b have the same dtype.
Status require_same_dtype(const KernelContext& ctx, int a, int b);

}  // namespace osprey::ref
