// Helpers shared by the element-wise reference kernels (unary.cc, binary.cc,
// cast.cc): conversions between element types without undefined behaviour, wrapping integer
// arithmetic, and a row-wise broadcasting loop.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {

// The reference unary kernels (unary.cc): the CPU kernels hand them what they do not take.
Status unary_sigmoid(KernelContext& ctx);
Status unary_tanh(KernelContext& ctx);
Status unary_exp(KernelContext& ctx);
Status unary_leaky_relu(KernelContext& ctx);
Status unary_sqrt(KernelContext& ctx);
Status unary_erf(KernelContext& ctx);
Status unary_hard_sigmoid(KernelContext& ctx);
Status unary_hardswish(KernelContext& ctx);
Status unary_abs(KernelContext& ctx);
Status unary_neg(KernelContext& ctx);
Status unary_reciprocal(KernelContext& ctx);
Status unary_log(KernelContext& ctx);
Status unary_softplus(KernelContext& ctx);
Status unary_mish(KernelContext& ctx);
Status unary_elu(KernelContext& ctx);
Status unary_floor(KernelContext& ctx);
Status unary_ceil(KernelContext& ctx);
Status unary_round(KernelContext& ctx);
// The reference Add, Sub, Mul, Div, Pow, Max and Min (binary.cc): the CPU kernels hand them what they do not take.
Status binary_add(KernelContext& ctx);
Status binary_sub(KernelContext& ctx);
Status binary_mul(KernelContext& ctx);
Status binary_div(KernelContext& ctx);
Status binary_pow(KernelContext& ctx);
Status variadic_max(KernelContext& ctx);
Status variadic_min(KernelContext& ctx);
Status variadic_sum(KernelContext& ctx);
Status variadic_mean(KernelContext& ctx);
// com.osprey Gelu (fused.cc), the CPU kernel's oracle and fallback.
Status gelu(KernelContext& ctx);

template <class T>
inline constexpr bool is_half_v = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// Float (or double) -> integer type To: truncates toward zero, NaN gives 0, values beyond the
// int64 range saturate, then narrower types wrap modulo 2^bits (what numpy does on x86).
// uint64 targets take non-negative values up to 2^64-1 directly.
template <class To>
To float_to_int(double d) {
  static_assert(std::is_integral_v<To> && !std::is_same_v<To, bool>);
  if (std::isnan(d)) return To(0);
  d = std::trunc(d);
  if constexpr (std::is_same_v<To, uint64_t>) {
    if (d >= 18446744073709551616.0) return std::numeric_limits<uint64_t>::max();
    if (d >= 0) return static_cast<uint64_t>(d);
  }
  int64_t i;
  if (d >= 9223372036854775808.0)
    i = std::numeric_limits<int64_t>::max();
  else if (d < -9223372036854775808.0)
    i = std::numeric_limits<int64_t>::min();
  else
    i = static_cast<int64_t>(d);
  return static_cast<To>(i);  // modular for narrower types (well defined since C++20)
}

// double -> 16-bit float with a single rounding: round to float with "round to odd", which
// keeps enough information for the final round-to-nearest-even to be exact.
template <class H>
H double_to_half(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(d) && static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u |= 1u;  // sticky bit: the value was inexact
    std::memcpy(&f, &u, 4);
  }
  return H(f);
}

// Converts one element between any two non-string element types, with no undefined
// behaviour: to bool is `v != 0` (NaN is true), float to int as in float_to_int.
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<To, bool>) {
    return static_cast<compute_t<From>>(v) != compute_t<From>(0);
  } else if constexpr (std::is_integral_v<To> && is_float_v<From>) {
    return float_to_int<To>(static_cast<double>(static_cast<compute_t<From>>(v)));
  } else if constexpr (is_half_v<To> && std::is_same_v<From, double>) {
    return double_to_half<To>(v);
  } else if constexpr (is_half_v<To> && (std::is_same_v<From, int64_t> ||
                                         std::is_same_v<From, uint64_t> ||
                                         std::is_same_v<From, int32_t> ||
                                         std::is_same_v<From, uint32_t>)) {
    return double_to_half<To>(static_cast<double>(v));
  } else {
    return cast_to<To>(v);
  }
}

// Integer arithmetic that wraps modulo 2^bits instead of overflowing (signed overflow is UB,
// and small unsigned types promote to int).
template <class T>
using wide_unsigned_t =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T wrap_add(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
T wrap_sub(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
T wrap_mul(T a, T b) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}
template <class T>
T wrap_neg(T a) {
  using U = wide_unsigned_t<T>;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

// Visits the output of an N-operand broadcast one row (innermost dimension) at a time:
//   row(out_offset, in_offsets, in_inner_strides, row_length)
// where in_inner_strides[k] is 0 (operand k broadcast along the row) or 1. `ins` are the
// operands' shapes, already known to broadcast to `out`. When every operand is either full
// size or a single element the whole tensor is visited as one row.
template <size_t N, class F>
void broadcast_rows(const Shape& out, const std::array<const Shape*, N>& ins, F&& row) {
  const int64_t n = shape_numel(out);
  if (n <= 0) return;
  std::array<int64_t, N> offsets{}, inner{};
  bool flat = true;
  for (size_t k = 0; k < N; ++k) {
    const int64_t m = shape_numel(*ins[k]);
    if (m != n && m != 1) flat = false;
    inner[k] = m == n ? 1 : 0;
  }
  if (flat || out.empty()) {
    row(int64_t{0}, offsets, inner, n);
    return;
  }
  const int64_t len = out.back();
  const Shape outer(out.begin(), out.end() - 1);
  std::vector<std::vector<int64_t>> strides(N);
  for (size_t k = 0; k < N; ++k) {
    std::vector<int64_t> s = broadcast_strides(*ins[k], out);
    inner[k] = s.back();
    s.pop_back();
    strides[k] = std::move(s);
  }
  StridedIter it(outer, std::move(strides));
  const int64_t rows = n / len;
  for (int64_t r = 0; r < rows; ++r, it.next()) {
    for (size_t k = 0; k < N; ++k) offsets[k] = it.offset(k);
    row(r * len, offsets, inner, len);
  }
}

// out[i] = f(a[i], b[i]) over the broadcast of shapes sa and sb to so.
template <class TA, class TB, class TO, class F>
void broadcast_binary(const Shape& sa, const TA* a, const Shape& sb, const TB* b,
                      const Shape& so, TO* out, F f) {
  broadcast_rows<2>(so, {&sa, &sb},
                    [&](int64_t o, const std::array<int64_t, 2>& off,
                        const std::array<int64_t, 2>& st, int64_t len) {
                      const TA* x = a + off[0];
                      const TB* y = b + off[1];
                      TO* z = out + o;
                      if (st[0] == 1 && st[1] == 1) {
                        for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], y[i]);
                      } else if (st[0] == 1) {
                        const TB yv = y[0];
                        for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], yv);
                      } else if (st[1] == 1) {
                        const TA xv = x[0];
                        for (int64_t i = 0; i < len; ++i) z[i] = f(xv, y[i]);
                      } else {
                        const TO v = f(x[0], y[0]);
                        for (int64_t i = 0; i < len; ++i) z[i] = v;
                      }
                    });
}

}  // namespace osprey::ref
