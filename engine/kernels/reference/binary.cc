// Broadcasting element-wise ops with several inputs: Add, Sub, Mul, Div, Pow, Mod, BitShift,
// comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual), logic (And, Or, Xor),
// BitwiseAnd/Or/Xor, PRelu;
// variadic Max, Min, Sum, Mean; and the three-input select, Where.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::ref {
namespace {

// Inputs of a binary op, with B's shape as it broadcasts (it differs from B's own shape only
// for the legacy `broadcast`/`axis` attributes) and the output shape.
struct Binary {
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  Shape b_view;
  Shape out;
};

Status require_tensor(const KernelContext& ctx, int i, const char* op) {
  if (!ctx.has_input(i)) return invalid_argument(op, ": input ", i, " is required");
  if (!ctx.input_value(i).is_tensor()) return invalid_argument(op, ": input ", i, " must be a tensor");
  return Status::Ok();
}

// Checks the two inputs and computes shapes. Before opset 7 the arithmetic, comparison and
// logic ops did not broadcast unless `broadcast`=1, and then B was broadcast to A, aligned at
// `axis` (or at the trailing dimensions when axis is absent).
Status prepare_binary(const KernelContext& ctx, const char* op, bool same_dtype, Binary* g) {
  OSPREY_RETURN_IF_ERROR(require_tensor(ctx, 0, op));
  OSPREY_RETURN_IF_ERROR(require_tensor(ctx, 1, op));
  g->a = &ctx.input(0);
  g->b = &ctx.input(1);
  if (same_dtype) OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Shape& sa = g->a->shape();
  g->b_view = g->b->shape();
  if (ctx.opset() < 7) {
    if (ctx.attr_int("broadcast", 0) == 0) {
      if (sa != g->b_view)
        return invalid_argument(op, ": input shapes ", shape_to_string(sa), " and ",
                                shape_to_string(g->b_view),
                                " differ and attribute broadcast is not set");
      g->out = sa;
      return Status::Ok();
    }
    const int64_t ra = g->a->rank(), rb = g->b->rank();
    if (rb > ra)
      return invalid_argument(op, ": legacy broadcast needs rank(B) <= rank(A), got ", rb,
                              " > ", ra);
    if (ctx.has_attr("axis") && rb > 0) {
      int64_t axis = 0;
      OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), ra, &axis));
      if (axis + rb > ra)
        return invalid_argument(op, ": B of rank ", rb, " does not fit A of rank ", ra,
                                " at axis ", axis);
      g->b_view.resize(static_cast<size_t>(ra - axis), 1);  // trailing ones
    }
    OSPREY_RETURN_IF_ERROR(broadcast_shapes({sa, g->b_view}, &g->out));
    if (g->out != sa)
      return invalid_argument(op, ": B of shape ", shape_to_string(g->b->shape()),
                              " cannot be broadcast to A of shape ", shape_to_string(sa));
    return Status::Ok();
  }
  Status s = broadcast_shapes({sa, g->b_view}, &g->out);
  if (!s.ok()) return invalid_argument(op, ": ", s.message());
  return Status::Ok();
}

template <class TA, class TB, class TO, class F>
void run_binary(const Binary& g, Tensor& y, F f) {
  broadcast_binary(g.a->shape(), g.a->data<TA>(), g.b_view, g.b->data<TB>(), g.out,
                   y.data<TO>(), f);
}

// Same-type ops (output type = input type). `f` takes and returns compute_t<T>.
template <class List, class MakeF>
Status same_type_binary(KernelContext& ctx, const char* op, MakeF make_f) {
  Binary g;
  OSPREY_RETURN_IF_ERROR(prepare_binary(ctx, op, true, &g));
  // Element by element: y may take over the bytes of an operand of its own shape that nothing
  // reads later.
  const int over = g.a->shape() == g.out && ctx.input_donatable(0)   ? 0
                   : g.b->shape() == g.out && ctx.input_donatable(1) ? 1
                                                                     : -1;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, over >= 0 ? ctx.new_output_over_input(0, over, g.a->dtype(), g.out)
                                              : ctx.new_output(0, g.a->dtype(), g.out));
  return dispatch<List>(g.a->dtype(), op, [&]<class T>() {
    using C = compute_t<T>;
    auto f = make_f.template operator()<C>();
    run_binary<T, T, T>(g, y, [&f](T a, T b) {
      return convert<T>(f(static_cast<C>(a), static_cast<C>(b)));
    });
    return Status::Ok();
  });
}

// Ops with a bool output. `f` compares two T values (16-bit floats compare as float).
template <class List, class F>
Status bool_binary(KernelContext& ctx, const char* op, F f) {
  Binary g;
  OSPREY_RETURN_IF_ERROR(prepare_binary(ctx, op, true, &g));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kBool, g.out));
  return dispatch<List>(g.a->dtype(), op, [&]<class T>() {
    run_binary<T, T, bool>(g, y, [&f](const T& a, const T& b) -> bool { return f(a, b); });
    return Status::Ok();
  });
}

}  // namespace

// ---- arithmetic

Status binary_add(KernelContext& ctx) {
  return same_type_binary<NumericTypes>(ctx, "Add", []<class C>() {
    return [](C a, C b) -> C {
      if constexpr (std::is_integral_v<C>) return wrap_add(a, b);
      else return a + b;
    };
  });
}

Status binary_sub(KernelContext& ctx) {
  return same_type_binary<NumericTypes>(ctx, "Sub", []<class C>() {
    return [](C a, C b) -> C {
      if constexpr (std::is_integral_v<C>) return wrap_sub(a, b);
      else return a - b;
    };
  });
}

Status binary_mul(KernelContext& ctx) {
  return same_type_binary<NumericTypes>(ctx, "Mul", []<class C>() {
    return [](C a, C b) -> C {
      if constexpr (std::is_integral_v<C>) return wrap_mul(a, b);
      else return a * b;
    };
  });
}

// Integer division truncates toward zero; division by zero gives 0 (as numpy does) and
// INT_MIN / -1 wraps, instead of trapping.
Status binary_div(KernelContext& ctx) {
  return same_type_binary<NumericTypes>(ctx, "Div", []<class C>() {
    return [](C a, C b) -> C {
      if constexpr (std::is_integral_v<C>) {
        if (b == 0) return C(0);
        if constexpr (std::is_signed_v<C>) {
          if (b == -1) return wrap_neg(a);
        }
        return static_cast<C>(a / b);
      } else {
        return a / b;
      }
    };
  });
}

// Mod: fmod=1 takes the sign of the dividend (C fmod / %), fmod=0 the sign of the divisor
// (Python %). The spec requires fmod=1 for floats; fmod=0 on floats is accepted and computed
// like numpy.mod, as ONNX's reference does. x mod 0 gives 0 for integers (as numpy does).
Status binary_mod(KernelContext& ctx) {
  const int64_t fmod = ctx.attr_int("fmod", 0);
  if (fmod != 0 && fmod != 1)
    return invalid_argument("Mod: attribute fmod must be 0 or 1, got ", fmod);
  return same_type_binary<NumericTypes>(ctx, "Mod", [fmod]<class C>() {
    return [fmod](C a, C b) -> C {
      C r;
      if constexpr (std::is_integral_v<C>) {
        if (b == 0) return C(0);
        if constexpr (std::is_signed_v<C>) {
          if (b == -1) return C(0);
        }
        r = static_cast<C>(a % b);
      } else {
        r = std::fmod(a, b);
      }
      if constexpr (std::is_signed_v<C> || !std::is_integral_v<C>) {
        if (fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
      }
      return r;
    };
  });
}

namespace {

using PowBaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;

// Integer power by repeated squaring, wrapping on overflow. Negative exponents give the
// truncated value of 1 / a^-e (0 unless |a| == 1).
template <class T, class E>
T int_pow(T a, E e) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (a == 1) return T(1);
      if (a == T(-1)) return (e % 2 == 0) ? T(1) : T(-1);
      return T(0);
    }
  }
  uint64_t n = static_cast<uint64_t>(e);
  T result = 1, base = a;
  while (n) {
    if (n & 1) result = wrap_mul(result, base);
    base = wrap_mul(base, base);
    n >>= 1;
  }
  return result;
}

// Integer ^ integer is exact; everything else goes through double.
template <class T, class E>
T pow_elem(T a, E b) {
  if constexpr (std::is_integral_v<T> && std::is_integral_v<E>) {
    return int_pow(a, b);
  } else {
    const double x = static_cast<double>(static_cast<compute_t<T>>(a));
    const double e = static_cast<double>(static_cast<compute_t<E>>(b));
    // A square (an STFT's magnitude, a variance) is x * x: exact in double for the narrower
    // types, the correctly rounded square for double.
    return convert<T>(e == 2.0 ? x * x : std::pow(x, e));
  }
}

}  // namespace

// Pow: the exponent may have another type than the base from opset 12; the output has the
// base's type.
Status binary_pow(KernelContext& ctx) {
  Binary g;
  OSPREY_RETURN_IF_ERROR(prepare_binary(ctx, "Pow", ctx.opset() < 12, &g));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, g.a->dtype(), g.out));
  return dispatch<PowBaseTypes>(g.a->dtype(), "Pow", [&]<class T>() {
    return dispatch<NumericTypes>(g.b->dtype(), "Pow exponent", [&]<class E>() {
      run_binary<T, E, T>(g, y, [](T a, E b) { return pow_elem(a, b); });
      return Status::Ok();
    });
  });
}

// BitShift on unsigned integers; shifting by the bit width or more gives 0.
Status binary_bitshift(KernelContext& ctx) {
  const std::string dir = ctx.attr_string("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return invalid_argument("BitShift: attribute direction must be \"LEFT\" or \"RIGHT\", got \"",
                            dir, "\"");
  const bool left = dir == "LEFT";
  Binary g;
  OSPREY_RETURN_IF_ERROR(prepare_binary(ctx, "BitShift", true, &g));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, g.a->dtype(), g.out));
  using UIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
  return dispatch<UIntTypes>(g.a->dtype(), "BitShift", [&]<class T>() {
    using U = wide_unsigned_t<T>;
    run_binary<T, T, T>(g, y, [left](T a, T s) -> T {
      if (s >= sizeof(T) * 8) return T(0);
      return left ? static_cast<T>(static_cast<U>(a) << s) : static_cast<T>(a >> s);
    });
    return Status::Ok();
  });
}

// ---- comparisons and logic

Status binary_equal(KernelContext& ctx) {
  return bool_binary<AllTypes>(ctx, "Equal", [](const auto& a, const auto& b) { return a == b; });
}
Status binary_greater(KernelContext& ctx) {
  return bool_binary<NumericTypes>(ctx, "Greater", [](auto a, auto b) { return a > b; });
}
Status binary_less(KernelContext& ctx) {
  return bool_binary<NumericTypes>(ctx, "Less", [](auto a, auto b) { return a < b; });
}
Status binary_greater_or_equal(KernelContext& ctx) {
  return bool_binary<NumericTypes>(ctx, "GreaterOrEqual", [](auto a, auto b) { return a >= b; });
}
Status binary_less_or_equal(KernelContext& ctx) {
  return bool_binary<NumericTypes>(ctx, "LessOrEqual", [](auto a, auto b) { return a <= b; });
}
Status binary_and(KernelContext& ctx) {
  return bool_binary<TypeList<bool>>(ctx, "And", [](bool a, bool b) { return a && b; });
}
Status binary_or(KernelContext& ctx) {
  return bool_binary<TypeList<bool>>(ctx, "Or", [](bool a, bool b) { return a || b; });
}
Status binary_xor(KernelContext& ctx) {
  return bool_binary<TypeList<bool>>(ctx, "Xor", [](bool a, bool b) { return a != b; });
}

// BitwiseAnd / BitwiseOr / BitwiseXor (opset 18) on integers of one type.
template <class F>
Status bitwise_binary(KernelContext& ctx, const char* name, F f) {
  Binary g;
  OSPREY_RETURN_IF_ERROR(prepare_binary(ctx, name, true, &g));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, g.a->dtype(), g.out));
  return dispatch<IntTypes>(g.a->dtype(), name, [&]<class T>() {
    run_binary<T, T, T>(g, y, [f](T a, T b) -> T { return static_cast<T>(f(a, b)); });
    return Status::Ok();
  });
}
Status bitwise_and(KernelContext& ctx) {
  return bitwise_binary(ctx, "BitwiseAnd", [](auto a, auto b) { return a & b; });
}
Status bitwise_or(KernelContext& ctx) {
  return bitwise_binary(ctx, "BitwiseOr", [](auto a, auto b) { return a | b; });
}
Status bitwise_xor(KernelContext& ctx) {
  return bitwise_binary(ctx, "BitwiseXor", [](auto a, auto b) { return a ^ b; });
}

// PRelu: y = x < 0 ? slope * x : x, with slope broadcast to x's shape (unidirectional).
Status binary_prelu(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_tensor(ctx, 0, "PRelu"));
  OSPREY_RETURN_IF_ERROR(require_tensor(ctx, 1, "PRelu"));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  Shape out;
  Status s = broadcast_shapes({x.shape(), slope.shape()}, &out);
  if (!s.ok() || out != x.shape())
    return invalid_argument("PRelu: slope of shape ", shape_to_string(slope.shape()),
                            " cannot be broadcast to X of shape ", shape_to_string(x.shape()));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  return dispatch<NumericTypes>(x.dtype(), "PRelu", [&]<class T>() {
    using C = compute_t<T>;
    broadcast_binary(x.shape(), x.data<T>(), slope.shape(), slope.data<T>(), out, y.data<T>(),
                     [](T a, T b) -> T {
                       const C v = static_cast<C>(a);
                       if constexpr (std::is_unsigned_v<C>) {
                         return a;
                       } else if constexpr (std::is_integral_v<C>) {
                         return v < C(0) ? wrap_mul(static_cast<C>(b), v) : v;
                       } else {
                         return convert<T>(v < C(0) ? static_cast<C>(b) * v : v);
                       }
                     });
    return Status::Ok();
  });
}

// ---- variadic ops and Where

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
