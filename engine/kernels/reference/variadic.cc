// Element-wise ops over a variable number of broadcast inputs: Max, Min, Sum, Mean; and the
// three-input select, Where.
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::ref {
namespace {

// Folds inputs 0..n-1 (numpy-broadcast together; opsets before 8 required equal shapes, which
// broadcasting accepts too) with `f`, accumulating in compute_t<T>, then applies `finish` to
// each accumulated value.
template <class List, class F, class Finish>
Status fold_inputs(KernelContext& ctx, const char* op, F f, Finish finish) {
  const int n = ctx.num_inputs();
  if (n < 1) return invalid_argument(op, ": needs at least one input");
  std::vector<Shape> shapes;
  for (int i = 0; i < n; ++i) {
    if (!ctx.has_input(i)) return invalid_argument(op, ": input ", i, " is missing");
    if (!ctx.input_value(i).is_tensor()) return invalid_argument(op, ": input ", i, " must be a tensor");
    if (i > 0) OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
    shapes.push_back(ctx.input(i).shape());
  }
  Shape out;
  Status s = broadcast_shapes(shapes, &out);
  if (!s.ok()) return invalid_argument(op, ": ", s.message());
  const DType dt = ctx.input(0).dtype();
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, out));
  return dispatch<List>(dt, op, [&]<class T>() {
    using C = compute_t<T>;
    std::vector<C> acc(static_cast<size_t>(y.numel()));
    C* pacc = acc.data();
    broadcast_binary(out, pacc, shapes[0], ctx.input(0).data<T>(), out, pacc,
                     [](C, T v) { return static_cast<C>(v); });
    for (int i = 1; i < n; ++i)
      broadcast_binary(out, pacc, shapes[static_cast<size_t>(i)], ctx.input(i).data<T>(), out,
                       pacc, [&f](C a, T v) -> C { return f(a, static_cast<C>(v)); });
    T* py = y.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) py[i] = convert<T>(finish(acc[i]));
    return Status::Ok();
  });
}

// NaN in any input gives NaN, as numpy.maximum / numpy.minimum do.
template <class C>
bool either_nan(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(a) || std::isnan(b);
  else return false;
}

constexpr auto kIdentity = [](auto v) { return v; };

}  // namespace

Status variadic_max(KernelContext& ctx) {
  return fold_inputs<NumericTypes>(
      ctx, "Max",
      [](auto a, auto b) -> decltype(a) {
        if (either_nan(a, b)) return std::isnan(static_cast<double>(a)) ? a : b;
        return a < b ? b : a;
      },
      kIdentity);
}

Status variadic_min(KernelContext& ctx) {
  return fold_inputs<NumericTypes>(
      ctx, "Min",
      [](auto a, auto b) -> decltype(a) {
        if (either_nan(a, b)) return std::isnan(static_cast<double>(a)) ? a : b;
        return b < a ? b : a;
      },
      kIdentity);
}

Status variadic_sum(KernelContext& ctx) {
  return fold_inputs<FloatTypes>(
      ctx, "Sum", [](auto a, auto b) -> decltype(a) { return a + b; }, kIdentity);
}

Status variadic_mean(KernelContext& ctx) {
  const double n = ctx.num_inputs();
  return fold_inputs<FloatTypes>(
      ctx, "Mean", [](auto a, auto b) -> decltype(a) { return a + b; },
      [n](auto v) -> decltype(v) { return v / static_cast<decltype(v)>(n); });
}

// Where(condition, X, Y): X where condition is true, else Y; all three broadcast together.
Status where(KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) {
    if (!ctx.has_input(i)) return invalid_argument("Where: input ", i, " is required");
    if (!ctx.input_value(i).is_tensor())
      return invalid_argument("Where: input ", i, " must be a tensor");
  }
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& yv = ctx.input(2);
  if (c.dtype() != DType::kBool)
    return invalid_argument("Where: condition must be bool, got ", dtype_name(c.dtype()));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 1, 2));
  Shape out;
  Status s = broadcast_shapes({c.shape(), x.shape(), yv.shape()}, &out);
  if (!s.ok()) return invalid_argument("Where: ", s.message());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  return dispatch<AllTypes>(x.dtype(), "Where", [&]<class T>() {
    const bool* pc = c.data<bool>();
    const T* px = x.data<T>();
    const T* py = yv.data<T>();
    T* po = y.data<T>();
    broadcast_rows<3>(out, {&c.shape(), &x.shape(), &yv.shape()},
                      [&](int64_t o, const std::array<int64_t, 3>& off,
                          const std::array<int64_t, 3>& st, int64_t len) {
                        for (int64_t i = 0; i < len; ++i)
                          po[o + i] = pc[off[0] + i * st[0]] ? px[off[1] + i * st[1]]
                                                             : py[off[2] + i * st[2]];
                      });
    return Status::Ok();
  });
}

}  // namespace osprey::ref
