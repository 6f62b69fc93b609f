// Unary element-wise math and activations: Abs, Neg, trigonometry, Exp/Log, rounding,
// Relu/Sigmoid/Elu/... activations, Clip, Shrink, IsNaN, IsInf, Not.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/reference/activation.h"
#include "kernels/reference/common.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::ref {
namespace {

constexpr int64_t kAnyRank = std::numeric_limits<int64_t>::max();

// y = f(x) element-wise, same dtype and shape as x. `f` takes and returns compute_t<T>
// (float for 16-bit floats); the result is converted back to T without UB.
template <class List, class F>
Status map_unary(KernelContext& ctx, const char* op, F f) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  // Element by element, so y may take over x's bytes when nothing reads x later.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, x.dtype() == DType::kString
                                        ? ctx.new_output(0, x.dtype(), x.shape())
                                        : ctx.new_output_over_input(0, 0, x.dtype(), x.shape()));
  return dispatch<List>(x.dtype(), op, [&]<class T>() {
    using C = compute_t<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) out[i] = convert<T>(f(static_cast<C>(in[i])));
    return Status::Ok();
  });
}

// For ops defined on floats: f gets float or double.
template <class F>
Status map_float(KernelContext& ctx, const char* op, F f) {
  return map_unary<FloatTypes>(ctx, op, f);
}

using SignedAndFloatTypes =
    TypeList<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t>;

// Rounds to the nearest integer, ties to even, independent of the FPU rounding mode.
template <class C>
C round_half_even(C x) {
  C r = std::floor(x);
  const C d = x - r;
  if (d > C(0.5) || (d == C(0.5) && std::fmod(r, C(2)) != C(0))) r += C(1);
  return r;
}

}  // namespace

// ---- math on floats

#define OSPREY_FLOAT_UNARY(fn, Op, expr)                              \
  Status fn(KernelContext& ctx) {                                     \
    return map_float(ctx, Op, [](auto x) -> decltype(x) { return expr; }); \
  }

OSPREY_FLOAT_UNARY(unary_acos, "Acos", std::acos(x))
OSPREY_FLOAT_UNARY(unary_acosh, "Acosh", std::acosh(x))
OSPREY_FLOAT_UNARY(unary_asin, "Asin", std::asin(x))
OSPREY_FLOAT_UNARY(unary_asinh, "Asinh", std::asinh(x))
OSPREY_FLOAT_UNARY(unary_atan, "Atan", std::atan(x))
OSPREY_FLOAT_UNARY(unary_atanh, "Atanh", std::atanh(x))
OSPREY_FLOAT_UNARY(unary_cos, "Cos", std::cos(x))
OSPREY_FLOAT_UNARY(unary_cosh, "Cosh", std::cosh(x))
OSPREY_FLOAT_UNARY(unary_sin, "Sin", std::sin(x))
OSPREY_FLOAT_UNARY(unary_sinh, "Sinh", std::sinh(x))
OSPREY_FLOAT_UNARY(unary_tan, "Tan", std::tan(x))
OSPREY_FLOAT_UNARY(unary_tanh, "Tanh", std::tanh(x))
OSPREY_FLOAT_UNARY(unary_exp, "Exp", std::exp(x))
OSPREY_FLOAT_UNARY(unary_log, "Log", std::log(x))
OSPREY_FLOAT_UNARY(unary_sqrt, "Sqrt", std::sqrt(x))
OSPREY_FLOAT_UNARY(unary_reciprocal, "Reciprocal", decltype(x)(1) / x)
OSPREY_FLOAT_UNARY(unary_floor, "Floor", std::floor(x))
OSPREY_FLOAT_UNARY(unary_ceil, "Ceil", std::ceil(x))
OSPREY_FLOAT_UNARY(unary_round, "Round", round_half_even(x))
OSPREY_FLOAT_UNARY(unary_softsign, "Softsign", x / (decltype(x)(1) + std::fabs(x)))
// log(1 + e^x), written to neither overflow nor lose precision.
OSPREY_FLOAT_UNARY(unary_softplus, "Softplus",
                   x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
// Mish (opset 18): x tanh(softplus(x)).
OSPREY_FLOAT_UNARY(unary_mish, "Mish",
                   x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x))))
// sigmoid and hardswish: activation.h
OSPREY_FLOAT_UNARY(unary_sigmoid, "Sigmoid", sigmoid(x))
OSPREY_FLOAT_UNARY(unary_hardswish, "HardSwish", hardswish(x))
#undef OSPREY_FLOAT_UNARY

// ---- math on all numeric types

Status unary_abs(KernelContext& ctx) {
  return map_unary<NumericTypes>(ctx, "Abs", [](auto x) -> decltype(x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      return x < 0 ? wrap_neg(x) : x;
    } else {
      return std::fabs(x);
    }
  });
}

Status unary_neg(KernelContext& ctx) {
  return map_unary<SignedAndFloatTypes>(ctx, "Neg", [](auto x) -> decltype(x) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      return wrap_neg(x);
    } else {
      return -x;
    }
  });
}

Status unary_sign(KernelContext& ctx) {
  return map_unary<NumericTypes>(ctx, "Sign", [](auto x) -> decltype(x) {
    using C = decltype(x);
    if constexpr (std::is_unsigned_v<C>) {
      return x > 0 ? C(1) : C(0);
    } else {
      if (x != x) return x;  // NaN stays NaN
      return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));
    }
  });
}

// Erf is defined for every numeric type (opset 9); integers go through double.
Status unary_erf(KernelContext& ctx) {
  return map_unary<NumericTypes>(ctx, "Erf", [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>) {
      return std::erf(static_cast<double>(x));
    } else {
      return std::erf(x);
    }
  });
}

// ---- activations

Status unary_relu(KernelContext& ctx) {
  return map_unary<SignedAndFloatTypes>(ctx, "Relu", [](auto x) -> decltype(x) {
    return x > 0 ? x : decltype(x)(0);
  });
}

Status unary_leaky_relu(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 0.01f);
  return map_float(ctx, "LeakyRelu", [alpha](auto x) -> decltype(x) {
    return leaky_relu(x, decltype(x)(alpha));
  });
}

Status unary_thresholded_relu(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return map_float(ctx, "ThresholdedRelu", [alpha](auto x) -> decltype(x) {
    using C = decltype(x);
    return x > C(alpha) ? x : C(0);
  });
}

Status unary_elu(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  return map_float(ctx, "Elu", [alpha](auto x) -> decltype(x) {
    using C = decltype(x);
    return x < 0 ? C(alpha) * std::expm1(x) : x;
  });
}

Status unary_selu(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.67326319217681884765625f);
  const double gamma = ctx.attr_float("gamma", 1.05070102214813232421875f);
  return map_float(ctx, "Selu", [alpha, gamma](auto x) -> decltype(x) {
    using C = decltype(x);
    return x > 0 ? C(gamma) * x : C(gamma) * (C(alpha) * std::exp(x) - C(alpha));
  });
}

Status unary_celu(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 1.0f);
  if (alpha == 0) return invalid_argument("Celu: attribute alpha must not be 0");
  return map_float(ctx, "Celu", [alpha](auto x) -> decltype(x) {
    using C = decltype(x);
    const C a = C(alpha);
    return std::max(C(0), x) + std::min(C(0), a * std::expm1(x / a));
  });
}

Status unary_hard_sigmoid(KernelContext& ctx) {
  const double alpha = ctx.attr_float("alpha", 0.2f);
  const double beta = ctx.attr_float("beta", 0.5f);
  return map_float(ctx, "HardSigmoid", [alpha, beta](auto x) -> decltype(x) {
    using C = decltype(x);
    return hard_sigmoid(x, C(alpha), C(beta));
  });
}

// Shrink is defined for every numeric type; lambd and bias are floats.
Status unary_shrink(KernelContext& ctx) {
  const double lambd = ctx.attr_float("lambd", 0.5f);
  const double bias = ctx.attr_float("bias", 0.0f);
  return map_unary<NumericTypes>(ctx, "Shrink", [lambd, bias](auto x) {
    using C = std::conditional_t<std::is_integral_v<decltype(x)>, double, decltype(x)>;
    const C v = static_cast<C>(x);
    if (v < C(-lambd)) return v + C(bias);
    if (v > C(lambd)) return v - C(bias);
    return C(0);
  });
}

// Clip: bounds are attributes min/max before opset 11 (absent = unbounded before opset 6,
// float32 lowest/max from opset 6), optional scalar inputs 1 and 2 from opset 11
// (absent = unbounded).
Status unary_clip(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const Tensor* lo_t = nullptr;
  const Tensor* hi_t = nullptr;
  double lo_attr = -std::numeric_limits<double>::infinity();
  double hi_attr = std::numeric_limits<double>::infinity();
  if (ctx.opset() < 11) {
    if (ctx.opset() >= 6) {
      lo_attr = std::numeric_limits<float>::lowest();
      hi_attr = std::numeric_limits<float>::max();
    }
    if (ctx.has_attr("min")) lo_attr = ctx.attr_float("min", 0);
    if (ctx.has_attr("max")) hi_attr = ctx.attr_float("max", 0);
    if (!dtype_is_float(x.dtype()))
      return invalid_argument("Clip: input type ", dtype_name(x.dtype()),
                              " needs opset 12 or later");
  } else {
    for (int i = 1; i <= 2; ++i) {
      if (!ctx.has_input(i)) continue;
      if (!ctx.input_value(i).is_tensor())
        return invalid_argument("Clip: input ", i, " must be a tensor");
      const Tensor& b = ctx.input(i);
      if (b.numel() != 1)
        return invalid_argument("Clip: ", i == 1 ? "min" : "max", " must be a scalar, got shape ",
                                shape_to_string(b.shape()));
      OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, i));
      (i == 1 ? lo_t : hi_t) = &b;
    }
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, x.dtype(), x.shape()));
  return dispatch<NumericTypes>(x.dtype(), "Clip", [&]<class T>() {
    using C = compute_t<T>;
    C lo, hi;
    if constexpr (std::is_integral_v<C>) {
      lo = std::numeric_limits<C>::lowest();
      hi = std::numeric_limits<C>::max();
    } else {
      lo = static_cast<C>(lo_attr);
      hi = static_cast<C>(hi_attr);
    }
    if (lo_t) lo = static_cast<C>(lo_t->data<T>()[0]);
    if (hi_t) hi = static_cast<C>(hi_t->data<T>()[0]);
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      C v = static_cast<C>(in[i]);
      if (v < lo) v = lo;
      if (v > hi) v = hi;  // min > max gives max everywhere, as the spec says
      out[i] = convert<T>(v);
    }
    return Status::Ok();
  });
}

// ---- predicates (bool outputs)

Status unary_isnan(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kBool, x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "IsNaN", [&]<class T>() {
    const T* in = x.data<T>();
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::isnan(static_cast<compute_t<T>>(in[i]));
    return Status::Ok();
  });
}

Status unary_isinf(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const bool neg = ctx.attr_int("detect_negative", 1) != 0;
  const bool pos = ctx.attr_int("detect_positive", 1) != 0;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kBool, x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "IsInf", [&]<class T>() {
    const T* in = x.data<T>();
    bool* out = y.data<bool>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto v = static_cast<compute_t<T>>(in[i]);
      out[i] = std::isinf(v) && (v > 0 ? pos : neg);
    }
    return Status::Ok();
  });
}

// BitwiseNot (opset 18) on integers.
Status bitwise_not(KernelContext& ctx) {
  return map_unary<IntTypes>(ctx, "BitwiseNot", [](auto x) -> decltype(x) { return static_cast<decltype(x)>(~x); });
}

Status unary_not(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kBool)
    return invalid_argument("Not: input must be bool, got ", dtype_name(x.dtype()));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kBool, x.shape()));
  const bool* in = x.data<bool>();
  bool* out = y.data<bool>();
  for (int64_t i = 0; i < x.numel(); ++i) out[i] = !in[i];
  return Status::Ok();
}

}  // namespace osprey::ref
