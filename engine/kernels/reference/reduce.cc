// Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare, ArgMax, ArgMin.
#include <cmath>
#include <limits>

#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
namespace {

// Converts a double result to T; for integer T, NaN becomes 0 and infinities clamp.
template <class T>
T from_double(double v) {
  if constexpr (is_float_v<T>) {
    return cast_to<T>(v);
  } else {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
      return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

template <class T>
bool is_nan(T v) {
  if constexpr (is_float_v<T>)
    return std::isnan(static_cast<double>(cast_to<double>(v)));
  else
    return false;
}

// Reduce operators: init() -> accumulator, step(acc, x), fin(acc, count) -> T.
template <class T>
struct SumOp {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) { return acc_add(a, cast_to<A>(x)); }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct SumSquareOp {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) {
    const A v = cast_to<A>(x);
    return acc_add(a, acc_mul(v, v));
  }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct MeanOp {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) { return acc_add(a, cast_to<A>(x)); }
  static T fin(A a, int64_t n) {
    if constexpr (is_float_v<T>) {
      return cast_to<T>(a / static_cast<double>(n));  // n == 0 gives NaN, as 0/0 should
    } else {
      return n == 0 ? T(0) : static_cast<T>(a / static_cast<A>(n));
    }
  }
};
template <class T>
struct ProdOp {
  using A = acc_t<T>;
  static A init() { return A(1); }
  static A step(A a, T x) { return acc_mul(a, cast_to<A>(x)); }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct MaxOp {
  using A = acc_t<T>;
  static A init() {
    if constexpr (is_float_v<T>) return -std::numeric_limits<double>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::lowest());
  }
  static A step(A a, T x) {
    const A v = cast_to<A>(x);
    return (v > a || is_nan(v)) ? v : a;  // NaN propagates
  }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct MinOp {
  using A = acc_t<T>;
  static A init() {
    if constexpr (is_float_v<T>) return std::numeric_limits<double>::infinity();
    else return static_cast<A>(std::numeric_limits<T>::max());
  }
  static A step(A a, T x) {
    const A v = cast_to<A>(x);
    return (v < a || is_nan(v)) ? v : a;
  }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct L1Op {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) {
    A v = cast_to<A>(x);
    if constexpr (std::is_signed_v<A> || std::is_floating_point_v<A>) {
      if (v < A(0)) v = acc_mul(v, A(-1));
    }
    return acc_add(a, v);
  }
  static T fin(A a, int64_t) { return cast_to<T>(a); }
};
template <class T>
struct L2Op {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) { return SumSquareOp<T>::step(a, x); }
  static T fin(A a, int64_t) { return from_double<T>(std::sqrt(static_cast<double>(a))); }
};
template <class T>
struct LogSumOp {
  using A = acc_t<T>;
  static A init() { return A(0); }
  static A step(A a, T x) { return acc_add(a, cast_to<A>(x)); }
  static T fin(A a, int64_t) { return from_double<T>(std::log(static_cast<double>(a))); }
};

template <class T, template <class> class Op>
void run_reduce(const T* x, T* y, const ReducePlan& p) {
  const int64_t n = static_cast<int64_t>(p.inner.size());
  for (size_t o = 0; o < p.base.size(); ++o) {
    const T* xb = x + p.base[o];
    auto a = Op<T>::init();
    for (int64_t off : p.inner) a = Op<T>::step(a, xb[off]);
    y[o] = Op<T>::fin(a, n);
  }
}

// log(sum(exp(x))) computed as max + log(sum(exp(x - max))).
template <class T>
void run_log_sum_exp(const T* x, T* y, const ReducePlan& p) {
  for (size_t o = 0; o < p.base.size(); ++o) {
    const T* xb = x + p.base[o];
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t off : p.inner) m = std::max(m, cast_to<double>(xb[off]));
    if (!std::isfinite(m)) {  // empty, all -inf, or +inf present: the plain formula is right
      double s = 0;
      for (int64_t off : p.inner) s += std::exp(cast_to<double>(xb[off]));
      y[o] = from_double<T>(std::log(s));
      continue;
    }
    double s = 0;
    for (int64_t off : p.inner) s += std::exp(cast_to<double>(xb[off]) - m);
    y[o] = from_double<T>(m + std::log(s));
  }
}

}  // namespace

Status reduce_axes(const KernelContext& ctx, int axes_input_since, const Tensor& x,
                   std::vector<bool>* reduce, bool* noop) {
  std::vector<int64_t> axes;
  *noop = false;
  if (ctx.opset() >= axes_input_since) {
    if (ctx.has_attr("axes"))
      return invalid_argument("from opset ", axes_input_since, " the axes are input 1, not an attribute");
    if (ctx.has_input(1)) {
      const Tensor& a = ctx.input(1);
      if (a.dtype() != DType::kInt64 && a.dtype() != DType::kInt32)
        return invalid_argument("axes input must be int64, got ", dtype_name(a.dtype()));
      if (a.rank() > 1) return invalid_argument("axes input must be 1-D, got rank ", a.rank());
      axes = a.to_int64_vector();
    }
    if (axes.empty() && ctx.attr_int("noop_with_empty_axes", 0) != 0) *noop = true;
  } else {
    axes = ctx.attr_ints("axes");
  }
  const int64_t rank = x.rank();
  reduce->assign(static_cast<size_t>(rank), axes.empty());
  if (axes.empty() || rank == 0) return Status::Ok();
  OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, rank));
  for (int64_t a : axes) (*reduce)[static_cast<size_t>(a)] = true;
  return Status::Ok();
}

namespace {

template <template <class> class Op>
Status reduce_kernel(KernelContext& ctx, const char* name, int axes_input_since,
                     bool log_sum_exp = false, bool bool_ok = false) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  std::vector<bool> reduce;
  bool noop = false;
  OSPREY_RETURN_IF_ERROR(reduce_axes(ctx, axes_input_since, x, &reduce, &noop));
  if (noop) {
    ctx.set_output(0, x.reshaped(x.shape()));
    return Status::Ok();
  }
  const ReducePlan plan = make_reduce_plan(x.shape(), reduce);
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  OSPREY_ASSIGN_OR_RETURN(Tensor y,
                          ctx.new_output(0, x.dtype(), keepdims ? plan.out_shape : plan.squeezed_shape));
  if (x.dtype() == DType::kBool && bool_ok) {
    // ReduceMax/Min over bool (opset 20): any / all, as the max / min of bytes 0 and 1 (an
    // empty set gives the byte type's lowest or highest, false or true).
    std::vector<uint8_t> bytes(static_cast<size_t>(x.numel())), out(static_cast<size_t>(y.numel()));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = x.data<bool>()[i] ? 1 : 0;
    run_reduce<uint8_t, Op>(bytes.data(), out.data(), plan);
    for (size_t i = 0; i < out.size(); ++i) y.data<bool>()[i] = out[i] != 0;
    return Status::Ok();
  }
  return dispatch<NumericTypes>(x.dtype(), name, [&]<class T>() {
    if (log_sum_exp)
      run_log_sum_exp<T>(x.data<T>(), y.data<T>(), plan);
    else
      run_reduce<T, Op>(x.data<T>(), y.data<T>(), plan);
    return Status::Ok();
  });
}

// ArgMax / ArgMin along one axis. NaN counts as the extreme value (as numpy does).
template <bool kMax>
Status arg_kernel(KernelContext& ctx, const char* name) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, 64));
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), rank, &axis));
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  Shape out_shape;
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < axis) outer *= x.dim(d);
    if (d > axis) inner *= x.dim(d);
    if (d == axis) {
      n = x.dim(d);
      if (keepdims) out_shape.push_back(1);
    } else {
      out_shape.push_back(x.dim(d));
    }
  }
  if (n == 0 && outer * inner != 0)
    return invalid_argument(name, " over an empty axis ", axis, " of shape ",
                            shape_to_string(x.shape()));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kInt64, out_shape));
  int64_t* out = y.data<int64_t>();
  return dispatch<NumericTypes>(x.dtype(), name, [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) {
        const T* p = in + o * n * inner + i;
        int64_t best = 0;
        C bv = static_cast<C>(p[0]);
        bool bnan = is_nan(bv);
        for (int64_t k = 1; k < n; ++k) {
          const C v = static_cast<C>(p[k * inner]);
          const bool vnan = is_nan(v);
          bool better, equal;
          if (bnan || vnan) {
            better = vnan && !bnan;
            equal = vnan && bnan;
          } else {
            better = kMax ? v > bv : v < bv;
            equal = v == bv;
          }
          if (better || (last && equal)) {
            best = k;
            bv = v;
            bnan = vnan;
          }
        }
        out[o * inner + i] = best;
      }
    }
    return Status::Ok();
  });
}

}  // namespace

Status reduce_sum(KernelContext& ctx) { return reduce_kernel<SumOp>(ctx, "ReduceSum", 13); }
Status reduce_mean(KernelContext& ctx) { return reduce_kernel<MeanOp>(ctx, "ReduceMean", 18); }
Status reduce_max(KernelContext& ctx) {
  return reduce_kernel<MaxOp>(ctx, "ReduceMax", 18, false, ctx.opset() >= 20);
}
Status reduce_min(KernelContext& ctx) {
  return reduce_kernel<MinOp>(ctx, "ReduceMin", 18, false, ctx.opset() >= 20);
}
Status reduce_prod(KernelContext& ctx) { return reduce_kernel<ProdOp>(ctx, "ReduceProd", 18); }
Status reduce_l1(KernelContext& ctx) { return reduce_kernel<L1Op>(ctx, "ReduceL1", 18); }
Status reduce_l2(KernelContext& ctx) { return reduce_kernel<L2Op>(ctx, "ReduceL2", 18); }
Status reduce_log_sum(KernelContext& ctx) {
  return reduce_kernel<LogSumOp>(ctx, "ReduceLogSum", 18);
}
Status reduce_log_sum_exp(KernelContext& ctx) {
  return reduce_kernel<SumOp>(ctx, "ReduceLogSumExp", 18, /*log_sum_exp=*/true);
}
Status reduce_sum_square(KernelContext& ctx) {
  return reduce_kernel<SumSquareOp>(ctx, "ReduceSumSquare", 18);
}
Status arg_max(KernelContext& ctx) { return arg_kernel<true>(ctx, "ArgMax"); }
Status arg_min(KernelContext& ctx) { return arg_kernel<false>(ctx, "ArgMin"); }

}  // namespace osprey::ref
