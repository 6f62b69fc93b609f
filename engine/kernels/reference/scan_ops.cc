// Ops that scan or order along one axis: CumSum, TopK.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
namespace {

// Reads a scalar (or one-element 1-D) integer input.
Status scalar_int_input(const KernelContext& ctx, int i, const char* what, int64_t* out) {
  if (!ctx.has_input(i)) return invalid_argument(what, " input is required");
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32)
    return invalid_argument(what, " must be int32 or int64, got ", dtype_name(t.dtype()));
  if (t.rank() > 1 || t.numel() != 1)
    return invalid_argument(what, " must be a scalar or a 1-element 1-D tensor, got shape ",
                            shape_to_string(t.shape()));
  *out = t.get_as_int64(0);
  return Status::Ok();
}

// Total order used by TopK: NaN is larger than every number and equal to itself.
template <class C>
bool greater_nan_max(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

}  // namespace

void split_at_axis(const Shape& s, int64_t axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = 1;
  *n = s.empty() ? 1 : s[static_cast<size_t>(axis)];
  *inner = 1;
  for (size_t d = 0; d < s.size(); ++d) {
    if (static_cast<int64_t>(d) < axis) *outer *= s[d];
    if (static_cast<int64_t>(d) > axis) *inner *= s[d];
  }
}

Status cum_sum(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  const Tensor& x = ctx.input(0);
  int64_t axis_in = 0, axis = 0;
  OSPREY_RETURN_IF_ERROR(scalar_int_input(ctx, 1, "axis", &axis_in));
  OSPREY_RETURN_IF_ERROR(normalize_axis(axis_in, x.rank(), &axis));
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0;
  const bool reverse = ctx.attr_int("reverse", 0) != 0;
  int64_t outer, n, inner;
  split_at_axis(x.shape(), axis, &outer, &n, &inner);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<NumericTypes>(x.dtype(), "CumSum", [&]<class T>() {
    using A = acc_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        A acc = A(0);
        for (int64_t s = 0; s < n; ++s) {
          const int64_t k = reverse ? n - 1 - s : s;
          const int64_t off = base + k * inner;
          const A v = cast_to<A>(in[off]);
          if (!exclusive) acc = acc_add(acc, v);
          out[off] = cast_to<T>(acc);
          if (exclusive) acc = acc_add(acc, v);
        }
      }
    }
    return Status::Ok();
  });
}

Status top_k(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  const Tensor& x = ctx.input(0);
  int64_t k = 0;
  if (ctx.opset() < 10) {
    if (!ctx.has_attr("k")) return invalid_argument("attribute k is required");
    k = ctx.attr_int("k", 0);
  } else {
    OSPREY_RETURN_IF_ERROR(scalar_int_input(ctx, 1, "K", &k));
  }
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", -1), x.rank(), &axis));
  const bool largest = ctx.attr_int("largest", 1) != 0;
  // `sorted` = 0 leaves the order unspecified; sorted output is a valid choice.
  int64_t outer, n, inner;
  split_at_axis(x.shape(), axis, &outer, &n, &inner);
  if (k < 0 || k > n)
    return invalid_argument("K = ", k, " is out of range for axis ", axis, " of size ", n);
  Shape out_shape = x.shape();
  out_shape[static_cast<size_t>(axis)] = k;
  OSPREY_ASSIGN_OR_RETURN(Tensor values, ctx.new_output(0, x.dtype(), out_shape));
  OSPREY_ASSIGN_OR_RETURN(Tensor indices, ctx.new_output(1, DType::kInt64, out_shape));
  if (values.numel() == 0) return Status::Ok();
  return dispatch<NumericTypes>(x.dtype(), "TopK", [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    std::vector<C> line(static_cast<size_t>(n));
    std::vector<int64_t> order(static_cast<size_t>(n));
    // Ties keep the lower index first.
    auto before = [&](int64_t a, int64_t b) {
      const C va = line[static_cast<size_t>(a)], vb = line[static_cast<size_t>(b)];
      const bool first = largest ? greater_nan_max(va, vb) : greater_nan_max(vb, va);
      const bool second = largest ? greater_nan_max(vb, va) : greater_nan_max(va, vb);
      if (first) return true;
      if (second) return false;
      return a < b;
    };
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * n * inner + i;
        for (int64_t j = 0; j < n; ++j) line[static_cast<size_t>(j)] = static_cast<C>(in[base + j * inner]);
        std::iota(order.begin(), order.end(), int64_t{0});
        std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        const int64_t obase = o * k * inner + i;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t src = order[static_cast<size_t>(j)];
          vout[obase + j * inner] = in[base + src * inner];
          iout[obase + j * inner] = src;
        }
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
