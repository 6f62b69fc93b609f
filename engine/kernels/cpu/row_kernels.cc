// The loops live in always-inline templates with no target of their own; run_avx512, run_avx2
// and run_generic are thin function templates with a target attribute that inline them, so the
// same source is vectorized for AVX-512, for AVX2+FMA and for baseline x86-64 (SSE2).
#include "kernels/cpu/row_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace osprey::cpu {
namespace {

#define OSPREY_INLINE inline __attribute__((always_inline))

// Lanes per block: 16 doubles are two AVX-512 or four AVX2 registers, enough independent
// accumulators to hide the add latency.
constexpr int kLanes = 16;

// Sum of n floats in double lanes.
OSPREY_INLINE double sum_row(const float* p, int64_t n) {
  double acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) acc[j] += static_cast<double>(p[k + j]);
  double s = 0;
  for (; k < n; ++k) s += static_cast<double>(p[k]);
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

// Sum of (p[k] - mean)^2 in double lanes.
OSPREY_INLINE double sum_sq_dev(const float* p, int64_t n, double mean) {
  double acc[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      const double d = static_cast<double>(p[k + j]) - mean;
      acc[j] += d * d;
    }
  double s = 0;
  for (; k < n; ++k) {
    const double d = static_cast<double>(p[k]) - mean;
    s += d * d;
  }
  for (int j = 0; j < kLanes; ++j) s += acc[j];
  return s;
}

OSPREY_INLINE void layer_norm_impl(const float* x, float* y, int64_t rows, int64_t m,
                                   const float* scale, const float* bias, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * m;
    float* q = y + r * m;
    const double mean = sum_row(p, m) / static_cast<double>(m);
    const double var = sum_sq_dev(p, m, mean) / static_cast<double>(m);
    const float inv = static_cast<float>(1.0 / std::sqrt(var + eps));
    const float mf = static_cast<float>(mean);
    if (bias) {
      for (int64_t k = 0; k < m; ++k) q[k] = (p[k] - mf) * inv * scale[k] + bias[k];
    } else {
      for (int64_t k = 0; k < m; ++k) q[k] = (p[k] - mf) * inv * scale[k];
    }
  }
}

// InstanceNormalization's planes: row r (channel (first_row + r) % channels) normalized with
// its own mean and variance (summed in double), then scaled and shifted by its channel's
// parameters: y = (x - mean) a + bias, a = scale / sqrt(var + eps), with the mean as two floats
// (hi + lo) so that x - mean keeps its low bits when the plane sits far from zero (x a + (bias
// - a mean) in float lost them: 1.4e-4 off the reference at values 100 +- 3).
// Rows of cg planes of m floats each (one group of one item): the row's mean and variance in
// double, then each plane scaled by its channel's (per_channel) or the group's parameter.
OSPREY_INLINE void group_norm_impl(const float* x, float* y, int64_t rows, int64_t cg, int64_t m,
                                   const float* scale, const float* bias, bool per_channel, int64_t groups,
                                   int64_t first_row, double eps) {
  const int64_t len = cg * m;
  for (int64_t r = 0; r < rows; ++r) {
    const float* p = x + r * len;
    float* q = y + r * len;
    const int64_t g = (first_row + r) % groups;
    const double mean = sum_row(p, len) / static_cast<double>(len);
    const double var = sum_sq_dev(p, len, mean) / static_cast<double>(len);
    const double inv = std::sqrt(var + eps);
    const float hi = static_cast<float>(mean), lo = static_cast<float>(mean - static_cast<double>(hi));
    for (int64_t c = 0; c < cg; ++c) {
      const int64_t at = per_channel ? g * cg + c : g;
      const float a = static_cast<float>(static_cast<double>(scale[at]) / inv);
      const float b = bias[at];
      const float* pc = p + c * m;
      float* qc = q + c * m;
      for (int64_t k = 0; k < m; ++k) qc[k] = ((pc[k] - hi) - lo) * a + b;
    }
  }
}

// Columns summed per pass over the reduced rows: 512 doubles (4 KiB) of accumulators.
constexpr int64_t kColumnTile = 512;
// Columns per unit of work of the middle-axis kernels (middle_axis.inc): one AVX-512 vector.
constexpr int64_t kColumnBlock = 16;

OSPREY_INLINE void sum_middle_impl(const float* x, float* y, int64_t o_begin, int64_t o_end,
                                   int64_t r, int64_t inner, double mult) {
  if (inner == 1) {
    for (int64_t o = o_begin; o < o_end; ++o)
      y[o] = static_cast<float>(sum_row(x + o * r, r) * mult);
    return;
  }
  double acc[kColumnTile];
  for (int64_t o = o_begin; o < o_end; ++o) {
    const float* xo = x + o * r * inner;
    for (int64_t i0 = 0; i0 < inner; i0 += kColumnTile) {
      const int64_t n = std::min(kColumnTile, inner - i0);
      for (int64_t j = 0; j < n; ++j) acc[j] = 0;
      for (int64_t k = 0; k < r; ++k) {
        const float* p = xo + k * inner + i0;
        for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<double>(p[j]);
      }
      float* q = y + o * inner + i0;
      for (int64_t j = 0; j < n; ++j) q[j] = static_cast<float>(acc[j] * mult);
    }
  }
}

// Floats in GCC's generic vector types: 16 lanes for AVX-512, 8 for AVX2 (one register each),
// 4 for the baseline one (one SSE register), with the selects that the vectorizer would not make from the
// scalar loops above. Each target variant lowers them to its own instructions.
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));

template <class F>
constexpr int kWidth = static_cast<int>(sizeof(F) / sizeof(float));

template <class F>
OSPREY_INLINE F load(const float* p) {
  F v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class F>
OSPREY_INLINE void store(float* p, F v) {
  std::memcpy(p, &v, sizeof v);
}
template <class F>
OSPREY_INLINE F splat(float x) {
  return x - F{};  // x in every lane, exactly (F{} + x would turn -0 into +0)
}
template <class F>
OSPREY_INLINE F vmax(F a, F b) {
  return a > b ? a : b;
}

// Cephes' expf, branch-free on every lane of F (float, or a vector of floats): x = n ln2 + r,
// |r| <= ln2/2, e^x = 2^n p(r) with p of degree 6. Returns p(r) and leaves in *t the value
// whose bits, less those of 1.5 * 2^23 (the rounding trick, exact for |n| < 2^22), are n; the
// caller builds 2^n in the exponent bits.
template <class F>
OSPREY_INLINE F exp_reduced(F x, F* t) {
  const F round = splat<F>(12582912.0f);
  *t = x * 1.44269504088896341f + round;
  const F n = *t - round;
  const F r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  F p = splat<F>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * (r * r) + r + 1.0f;
}

// e^x for x <= 0 (the softmax's x - max) or NaN (I is the int32 type of F's size). Below -87
// the result is 0 (2^n would leave the normal range).
template <class F, class I>
OSPREY_INLINE F exp_nonpositive(F x) {
  const F lo = splat<F>(-87.0f);
  const F xc = x < lo ? lo : x;  // keeps 2^n normal (denormal products are slow)
  F t;
  const F p = exp_reduced(xc, &t);
  const I ni = std::bit_cast<I>(t) - std::bit_cast<int32_t>(12582912.0f);
  const F y = p * std::bit_cast<F>((ni + 127) << 23);
  return x < lo ? F{} : y;
}

// 1 / (1 + e^-x) on every lane, from e = e^-|x| (never overflows): 1 / (1 + e) for x >= 0 and
// e / (1 + e) below. NaN stays NaN; below -87 the result is 0.
template <class F, class I>
OSPREY_INLINE F sigmoid_of(F x) {
  const F e = exp_nonpositive<F, I>(x < 0.0f ? x : -x);
  const F r = 1.0f / (e + 1.0f);
  return x < 0.0f ? e * r : r;
}

// tanh on every lane: sign(v) (1 - e) / (1 + e), e = e^(-2|v|) (never overflows; 1 from |v|
// 43.5 on), and below |v| 0.0625, where 1 - e would lose the low bits, its series to v^7
// (the next term is under 1e-12 relative there). NaN stays NaN.
template <class F, class I>
OSPREY_INLINE F tanh_of(F v) {
  const F a = v < 0.0f ? -v : v;
  const F e = exp_nonpositive<F, I>(a * -2.0f);
  const F big = (1.0f - e) / (1.0f + e);
  const F a2 = a * a;
  const F small = a * (1.0f + a2 * (-0.33333333f + a2 * (0.13333333f + a2 * -0.05396825f)));
  const F t = a < 0.0625f ? small : big;
  return v < 0.0f ? -t : t;
}

// e^x on every lane over the whole float range: x = n ln2 + r as exp_nonpositive, 2^n applied
// as two factors 2^(n/2) 2^(n - n/2) so that neither leaves the normal range (results down to
// the denormals, about e^-103.9, keep their value). Above 88.72 inf, below -104 0, NaN stays NaN.
template <class F, class I>
OSPREY_INLINE F exp_of(F x) {
  const F lo = x < -104.0f ? splat<F>(-104.0f) : x;
  const F xc = lo > 88.8f ? splat<F>(88.8f) : lo;
  F t;
  const F p = exp_reduced(xc, &t);
  const I ni = std::bit_cast<I>(t) - std::bit_cast<int32_t>(12582912.0f);
  const I n1 = ni >> 1, n2 = ni - n1;
  const F y = p * std::bit_cast<F>((n1 + 127) << 23) * std::bit_cast<F>((n2 + 127) << 23);
  const F inf = splat<F>(std::numeric_limits<float>::infinity());
  return x > 88.72283f ? inf : x < -104.0f ? F{} : y;
}

template <class F, class I>
OSPREY_INLINE void sigmoid_impl(const float* x, float* y, int64_t n) {
  constexpr int W = kWidth<F>;
  int64_t k = 0;
  for (; k + 2 * W <= n; k += 2 * W) {
    const F a = sigmoid_of<F, I>(load<F>(x + k)), b = sigmoid_of<F, I>(load<F>(x + k + W));
    store<F>(y + k, a);
    store<F>(y + k + W, b);
  }
  for (; k < n; ++k) y[k] = sigmoid_of<float, int32_t>(x[k]);
}

template <class F, class I>
OSPREY_INLINE void tanh_impl(const float* x, float* y, int64_t n) {
  constexpr int W = kWidth<F>;
  int64_t k = 0;
  for (; k + W <= n; k += W) store<F>(y + k, tanh_of<F, I>(load<F>(x + k)));
  for (; k < n; ++k) y[k] = tanh_of<float, int32_t>(x[k]);
}

template <class F, class I>
OSPREY_INLINE void exp_impl(const float* x, float* y, int64_t n) {
  constexpr int W = kWidth<F>;
  int64_t k = 0;
  for (; k + W <= n; k += W) store<F>(y + k, exp_of<F, I>(load<F>(x + k)));
  for (; k < n; ++k) y[k] = exp_of<float, int32_t>(x[k]);
}

// Gelu's erf form, 0.5 x (1 + erf(x / sqrt 2)), on every lane, through erfc(|z|) (z = x /
// sqrt 2) as Numerical Recipes' erfcc gives it: t e^(-z^2 + P(t)), t = 1 / (1 + |z| / 2), P a
// degree-9 polynomial, within 1.2e-7 relative everywhere. 1 + erf(z) is 2 - erfc(|z|) for
// z >= 0 and erfc(|z|) below, so the negative tail keeps its relative accuracy (no 1 - erf
// cancellation). The exponent (-z^2 + P(t) <= 3e-8) is clamped to 0. NaN stays NaN; -inf gives
// NaN (-inf * 0), as the reference's std::erf.
template <class F, class I>
OSPREY_INLINE F gelu_erf_of(F x) {
  const F z = x * 0.70710678118654752f;
  const F a = z < 0.0f ? -z : z;
  const F t = 1.0f / (a * 0.5f + 1.0f);
  F p = splat<F>(0.17087277f);
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  F arg = p - a * a;
  arg = arg > 0.0f ? F{} : arg;
  const F erfc = t * exp_nonpositive<F, I>(arg);
  return x * 0.5f * (z < 0.0f ? erfc : 2.0f - erfc);
}

// Gelu's tanh form, 0.5 x (1 + tanh(u)), u = sqrt(2 / pi) (x + 0.044715 x^3): 1 + tanh(u) is
// 2 sigmoid(2u), from e = e^(-2|u|) as sigmoid_of.
template <class F, class I>
OSPREY_INLINE F gelu_tanh_of(F x) {
  const F u = (x + x * x * x * 0.044715f) * 0.79788456080286535588f;
  const F e = exp_nonpositive<F, I>(u < 0.0f ? u * 2.0f : u * -2.0f);
  const F r = 1.0f / (e + 1.0f);
  return x * (u < 0.0f ? e * r : r);
}

template <class F, class I>
OSPREY_INLINE void gelu_impl(const float* x, float* y, int64_t n, bool tanh_form) {
  constexpr int W = kWidth<F>;
  int64_t k = 0;
  if (tanh_form) {
    for (; k + W <= n; k += W) store<F>(y + k, gelu_tanh_of<F, I>(load<F>(x + k)));
    for (; k < n; ++k) y[k] = gelu_tanh_of<float, int32_t>(x[k]);
  } else {
    for (; k + W <= n; k += W) store<F>(y + k, gelu_erf_of<F, I>(load<F>(x + k)));
    for (; k < n; ++k) y[k] = gelu_erf_of<float, int32_t>(x[k]);
  }
}

#include "kernels/cpu/recurrent_cells.inc"
#include "kernels/cpu/middle_axis.inc"
#include "kernels/cpu/unary_rows.inc"
#include "kernels/cpu/binary_rows.inc"

// W one-byte values (uint8 or int8, T) at p as W int32 lanes (I), and back. Written as element
// loops through an int32 array, which GCC's SLP vectorizer turns into vpmovzx / vpack
// sequences; a __builtin_convertvector from a byte vector was lowered one element at a time.
template <class I, class T>
OSPREY_INLINE I load_bytes(const T* p) {
  constexpr int W = static_cast<int>(sizeof(I) / sizeof(int32_t));
  int32_t t[W];
  for (int j = 0; j < W; ++j) t[j] = p[j];
  I v;
  std::memcpy(&v, t, sizeof v);
  return v;
}
template <class I, class T>
OSPREY_INLINE void store_bytes(T* p, I q) {  // q's lanes already within T's range
  constexpr int W = static_cast<int>(sizeof(I) / sizeof(int32_t));
  int32_t t[W];
  std::memcpy(t, &q, sizeof q);
  for (int j = 0; j < W; ++j) p[j] = static_cast<T>(t[j]);
}

// QuantizeLinear's arithmetic on every lane: round_half_even(x / scale) + zp, saturated to
// [lo, hi]; NaN gives 0 (the reference's saturate_round). x / scale is clamped to +-1024 first,
// which changes no saturated result (zp lies in [-128, 255]) and keeps the 1.5 * 2^23 rounding
// trick exact.
template <class F, class I>
OSPREY_INLINE I quantize_of(F x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const F round = splat<F>(12582912.0f);
  F v = x / scale;
  const auto is_num = v == v;
  v = v < -1024.0f ? splat<F>(-1024.0f) : v;
  v = v > 1024.0f ? splat<F>(1024.0f) : v;
  const F r = (v + round) - round;
  I q;
  if constexpr (std::is_same_v<F, float>) q = static_cast<int32_t>(is_num ? r : 0.0f) + zp;
  else q = __builtin_convertvector(is_num ? r : F{}, I) + zp;
  q = q < lo ? I{} + lo : q;
  q = q > hi ? I{} + hi : q;
  if constexpr (std::is_same_v<F, float>) return is_num ? q : 0;
  else return is_num ? q : I{};
}

template <class F, class I, class Q>
OSPREY_INLINE void quantize_impl(const float* x, Q* y, int64_t n, float scale, int32_t zp) {
  constexpr int W = kWidth<F>;
  constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  int64_t k = 0;
  for (; k + W <= n; k += W) {
    store_bytes(y + k, quantize_of<F, I>(load<F>(x + k), scale, zp, lo, hi));
  }
  for (; k < n; ++k) y[k] = static_cast<Q>(quantize_of<float, int32_t>(x[k], scale, zp, lo, hi));
}

template <class F, class I, class Q>
OSPREY_INLINE void dequantize_impl(const Q* x, float* y, int64_t n, float scale, int32_t zp) {
  constexpr int W = kWidth<F>;
  int64_t k = 0;
  for (; k + W <= n; k += W) {
    store<F>(y + k, __builtin_convertvector(load_bytes<I>(x + k) - zp, F) * scale);
  }
  for (; k < n; ++k) y[k] = static_cast<float>(static_cast<int32_t>(x[k]) - zp) * scale;
}

// The least and greatest of 0 and n floats, NaNs skipped (a comparison with NaN is false, so
// the running bound stays), as DynamicQuantizeLinear's reference.
template <class F>
OSPREY_INLINE void min_max_impl(const float* x, int64_t n, float* lo_out, float* hi_out) {
  constexpr int W = kWidth<F>;
  F lo[2] = {}, hi[2] = {};
  int64_t k = 0;
  for (; k + 2 * W <= n; k += 2 * W)
    for (int j = 0; j < 2; ++j) {
      const F v = load<F>(x + k + j * W);
      lo[j] = v < lo[j] ? v : lo[j];
      hi[j] = v > hi[j] ? v : hi[j];
    }
  float l = 0, h = 0;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < W; ++i) {
      l = lo[j][i] < l ? lo[j][i] : l;
      h = hi[j][i] > h ? hi[j][i] : h;
    }
  for (; k < n; ++k) {
    l = x[k] < l ? x[k] : l;
    h = x[k] > h ? x[k] : h;
  }
  *lo_out = l;
  *hi_out = h;
}

// QLinearAdd's arithmetic (the QDQ graph's DequantizeLinear x 2 -> Add [-> Relu] ->
// QuantizeLinear, in its float operations and order).
template <class F, class I, class A, class B, class Q>
OSPREY_INLINE void qlinear_add_impl(const A* a, const B* b, Q* y, int64_t n, const QAddParams* p) {
  constexpr int W = kWidth<F>;
  constexpr int32_t lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  int64_t k = 0;
  for (; k + W <= n; k += W) {
    F s = __builtin_convertvector(load_bytes<I>(a + k) - p->a_zero_point, F) * p->a_scale +
          __builtin_convertvector(load_bytes<I>(b + k) - p->b_zero_point, F) * p->b_scale;
    if (p->relu) s = s < 0.0f ? F{} : s;
    store_bytes(y + k, quantize_of<F, I>(s, p->y_scale, p->y_zero_point, lo, hi));
  }
  for (; k < n; ++k) {
    float s = static_cast<float>(static_cast<int32_t>(a[k]) - p->a_zero_point) * p->a_scale +
              static_cast<float>(static_cast<int32_t>(b[k]) - p->b_zero_point) * p->b_scale;
    if (p->relu) s = s < 0.0f ? 0.0f : s;
    y[k] = static_cast<Q>(quantize_of<float, int32_t>(s, p->y_scale, p->y_zero_point, lo, hi));
  }
}

// A vector's lanes reduced by halving (log2 of its width steps instead of one dependent step
// per lane: a 16-lane scalar loop cost more than the exp of a 128-wide row).
OSPREY_INLINE float hmax(F4 v) {
  v = vmax(v, __builtin_shufflevector(v, v, 2, 3, 0, 1));
  v = vmax(v, __builtin_shufflevector(v, v, 1, 0, 3, 2));
  return v[0];
}
OSPREY_INLINE float hmax(F8 v) {
  return hmax(vmax(__builtin_shufflevector(v, v, 0, 1, 2, 3), __builtin_shufflevector(v, v, 4, 5, 6, 7)));
}
OSPREY_INLINE float hmax(F16 v) {
  return hmax(vmax(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7),
                   __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15)));
}
OSPREY_INLINE float hsum(F4 v) {
  v += __builtin_shufflevector(v, v, 2, 3, 0, 1);
  v += __builtin_shufflevector(v, v, 1, 0, 3, 2);
  return v[0];
}
OSPREY_INLINE float hsum(F8 v) {
  return hsum(__builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7));
}
OSPREY_INLINE float hsum(F16 v) {
  return hsum(__builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
              __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15));
}

// Adds the row's mask (if any) in place and returns the row's max.
template <class F>
OSPREY_INLINE float add_mask_and_max(float* p, int64_t n, const float* mr, int64_t key_stride) {
  constexpr int W = kWidth<F>;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  F m0 = splat<F>(kNegInf), m1 = m0;
  int64_t k = 0;
  if (mr && key_stride == 1) {
    for (; k + 2 * W <= n; k += 2 * W) {
      const F v0 = load<F>(p + k) + load<F>(mr + k), v1 = load<F>(p + k + W) + load<F>(mr + k + W);
      store(p + k, v0);
      store(p + k + W, v1);
      m0 = vmax(v0, m0);
      m1 = vmax(v1, m1);
    }
  } else {
    const F add = splat<F>(mr ? mr[0] : 0.0f);
    for (; k + 2 * W <= n; k += 2 * W) {
      const F v0 = load<F>(p + k) + add, v1 = load<F>(p + k + W) + add;
      if (mr) {
        store(p + k, v0);
        store(p + k + W, v1);
      }
      m0 = vmax(v0, m0);
      m1 = vmax(v1, m1);
    }
  }
  float m = hmax(vmax(m0, m1));
  for (; k < n; ++k) {
    if (mr) p[k] += mr[k * key_stride];
    m = p[k] > m ? p[k] : m;
  }
  return m;
}

template <class F, class I>
OSPREY_INLINE void softmax_impl(float* s, int64_t rows, int64_t n, const float* mask,
                                int64_t mask_row_stride, int64_t mask_key_stride,
                                float* inv_sums) {
  constexpr int W = kWidth<F>;
  for (int64_t i = 0; i < rows; ++i) {
    float* p = s + i * n;
    const float m = add_mask_and_max<F>(p, n, mask ? mask + i * mask_row_stride : nullptr,
                                        mask_key_stride);
    // NaN needs no case of its own: a NaN element, or a max of -inf (x - max = NaN), makes
    // exp NaN and with it the sum and the whole row.
    const F mv = splat<F>(m);
    F a0 = F{}, a1 = F{};
    int64_t k = 0;
    for (; k + 2 * W <= n; k += 2 * W) {
      const F e0 = exp_nonpositive<F, I>(load<F>(p + k) - mv);
      const F e1 = exp_nonpositive<F, I>(load<F>(p + k + W) - mv);
      store(p + k, e0);
      store(p + k + W, e1);
      a0 += e0;
      a1 += e1;
    }
    float sum = hsum(a0 + a1);
    for (; k < n; ++k) {
      const float e = exp_nonpositive<float, int32_t>(p[k] - m);
      p[k] = e;
      sum += e;
    }
    if (inv_sums) {
      inv_sums[i] = 1.0f / sum;
      continue;
    }
    const F inv = splat<F>(1.0f / sum);
    for (k = 0; k + W <= n; k += W) store(p + k, load<F>(p + k) * inv);
    for (; k < n; ++k) p[k] *= inv[0];
  }
}

// Elements of a max pool: float32, or bfloat16 bits (uint16_t) compared as the floats they
// widen to; the max of bfloat16 values is one of them, so narrowing it back is exact.
OSPREY_INLINE float widen(float v) {
  return v;
}
OSPREY_INLINE float widen(uint16_t v) {
  return std::bit_cast<float>(static_cast<uint32_t>(v) << 16);
}
template <class T>
OSPREY_INLINE T narrow(float v) {
  if constexpr (std::is_same_v<T, float>) return v;
  else return static_cast<uint16_t>(std::bit_cast<uint32_t>(v) >> 16);
}
template <class F>
OSPREY_INLINE F load_elems(const float* p) {
  return load<F>(p);
}
// The bfloat16 bits (H) and their 32-bit widening (U) of each float vector type.
typedef uint16_t H4 __attribute__((vector_size(8)));
typedef uint16_t H8 __attribute__((vector_size(16)));
typedef uint16_t H16 __attribute__((vector_size(32)));
typedef uint32_t U4 __attribute__((vector_size(16)));
typedef uint32_t U8 __attribute__((vector_size(32)));
typedef uint32_t U16 __attribute__((vector_size(64)));
template <class F>
struct Bf16Lanes;
template <>
struct Bf16Lanes<F4> {
  using H = H4;
  using U = U4;
};
template <>
struct Bf16Lanes<F8> {
  using H = H8;
  using U = U8;
};
template <>
struct Bf16Lanes<F16> {
  using H = H16;
  using U = U16;
};
template <class F>
OSPREY_INLINE F load_elems(const uint16_t* p) {
  using H = typename Bf16Lanes<F>::H;
  using U = typename Bf16Lanes<F>::U;
  H h;
  std::memcpy(&h, p, sizeof h);
  return std::bit_cast<F>(__builtin_convertvector(h, U) << 16);
}
template <class F>
OSPREY_INLINE void store_elems(float* p, F v) {
  store(p, v);
}
template <class F>
OSPREY_INLINE void store_elems(uint16_t* p, F v) {
  using H = typename Bf16Lanes<F>::H;
  using U = typename Bf16Lanes<F>::U;
  const H h = __builtin_convertvector(std::bit_cast<U>(v) >> 16, H);
  std::memcpy(p, &h, sizeof h);
}

// How a max pool reads, compares and writes elements of type T in vectors the size of F:
// float32 (F itself), bfloat16 bits (uint16_t, widened to F: the max of bfloat16 values is one
// of them, so narrowing it back is exact), and uint8 / int8 (byte vectors of F's size: 64
// lanes for AVX-512; a quantized model's pools, exact and layout-free as the float ones).
template <class F>
struct ByteLanes;
template <>
struct ByteLanes<F4> {
  typedef uint8_t U __attribute__((vector_size(16)));
  typedef int8_t S __attribute__((vector_size(16)));
};
template <>
struct ByteLanes<F8> {
  typedef uint8_t U __attribute__((vector_size(32)));
  typedef int8_t S __attribute__((vector_size(32)));
};
template <>
struct ByteLanes<F16> {
  typedef uint8_t U __attribute__((vector_size(64)));
  typedef int8_t S __attribute__((vector_size(64)));
};
template <class F, class T>
struct PoolLanes {  // float32 and bfloat16
  using V = F;
  static constexpr int W = kWidth<F>;
  OSPREY_INLINE static V load(const T* p) { return load_elems<F>(p); }
  OSPREY_INLINE static void store(T* p, V v) { store_elems<F>(p, v); }
  OSPREY_INLINE static bool greater(T a, T b) { return widen(a) > widen(b); }
  static T lowest() { return narrow<T>(std::numeric_limits<float>::lowest()); }
};
template <class F, class T>
  requires(sizeof(T) == 1)
struct PoolLanes<F, T> {  // uint8 and int8
  using V = std::conditional_t<std::is_signed_v<T>, typename ByteLanes<F>::S, typename ByteLanes<F>::U>;
  static constexpr int W = static_cast<int>(sizeof(V));
  OSPREY_INLINE static V load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  OSPREY_INLINE static void store(T* p, V v) { std::memcpy(p, &v, sizeof v); }
  OSPREY_INLINE static bool greater(T a, T b) { return a > b; }
  static T lowest() { return std::numeric_limits<T>::lowest(); }
};

// Max pool over channels-last rows (see max_pool_nhwc_rows): each output pixel starts as its
// first valid tap and takes v where v > it, lane by lane (the reference's order, so NaNs land
// the same way), kept in registers over a window's taps; a window with no valid tap gets the
// type's lowest value. The valid taps of a window form a rectangle.
template <class F, class T>
OSPREY_INLINE void max_pool_impl(const T* x, T* y, const PoolGeometry* g, int64_t row_begin,
                                 int64_t row_end) {
  using L = PoolLanes<F, T>;
  using V = typename L::V;
  constexpr int W = L::W;
  const int64_t C = g->C;
  // The taps k of a window starting at `start` (step d, extent n) that land in [0, size).
  auto valid = [](int64_t start, int64_t d, int64_t n, int64_t size, int64_t* lo, int64_t* hi) {
    *lo = start >= 0 ? 0 : (-start + d - 1) / d;
    *hi = start + (n - 1) * d < size ? n : (size - 1 - start) / d + 1;
    if (*hi < *lo || start + *lo * d >= size) *hi = *lo;
  };
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t n = r / g->OH, oh = r % g->OH;
    const T* xn = x + n * g->H * g->W * C;
    T* yr = y + r * g->OW * C;
    const int64_t h0 = oh * g->SH - g->PH;
    int64_t kh_lo, kh_hi;
    valid(h0, g->DH, g->KH, g->H, &kh_lo, &kh_hi);
    for (int64_t ow = 0; ow < g->OW; ++ow) {
      T* yo = yr + ow * C;
      const int64_t w0 = ow * g->SW - g->PW;
      int64_t kw_lo, kw_hi;
      valid(w0, g->DW, g->KW, g->W, &kw_lo, &kw_hi);
      if (kh_lo == kh_hi || kw_lo == kw_hi) {
        std::fill(yo, yo + C, L::lowest());
        continue;
      }
      const T* first = xn + ((h0 + kh_lo * g->DH) * g->W + w0 + kw_lo * g->DW) * C;
      auto tap = [&](int64_t kh, int64_t kw) {
        return xn + ((h0 + kh * g->DH) * g->W + w0 + kw * g->DW) * C;
      };
      int64_t c = 0;
      for (; c + W <= C; c += W) {
        V acc = L::load(first + c);
        for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
          for (int64_t kw = kh == kh_lo ? kw_lo + 1 : kw_lo; kw < kw_hi; ++kw) {
            const V v = L::load(tap(kh, kw) + c);
            acc = v > acc ? v : acc;
          }
        L::store(yo + c, acc);
      }
      for (; c < C; ++c) {
        T acc = first[c];
        for (int64_t kh = kh_lo; kh < kh_hi; ++kh)
          for (int64_t kw = kh == kh_lo ? kw_lo + 1 : kw_lo; kw < kw_hi; ++kw) {
            const T v = tap(kh, kw)[c];
            acc = L::greater(v, acc) ? v : acc;
          }
        yo[c] = acc;
      }
    }
  }
}

// Gelu's erf form after a matrix product (gelu_fast_inplace): erf(z) on [-4, 4] as a rational
// function, z times an even degree-12 polynomial over an even degree-8 one (the float erf
// coefficients of Eigen and XLA), 1 beyond (within float rounding of 1 there). No exp: 0.4x
// gelu_erf_of's time, within 1.5e-6 absolute of the exact Gelu (the float rounding of the
// result near |x| = 9; relative accuracy is lost only in the negative tail, where 1 + erf
// cancels and the values are below 1e-4, as in a post-op's erf). NaN stays NaN; -inf gives
// NaN as the reference.
template <class F>
OSPREY_INLINE F gelu_erf_rational_of(F x) {
  F z = x * 0.70710678118654752f;
  z = z < -4.0f ? splat<F>(-4.0f) : z;  // NaN compares false and stays
  z = z > 4.0f ? splat<F>(4.0f) : z;
  const F z2 = z * z;
  F p = splat<F>(-2.72614225801306e-10f);
  p = p * z2 + 2.77068142495902e-08f;
  p = p * z2 - 2.10102402082508e-06f;
  p = p * z2 - 5.69250639462346e-05f;
  p = p * z2 - 7.34990630326855e-04f;
  p = p * z2 - 2.95459980854025e-03f;
  p = p * z2 - 1.60960333262415e-02f;
  F q = splat<F>(-1.45660718464996e-05f);
  q = q * z2 - 2.13374055278905e-04f;
  q = q * z2 - 1.68282697438203e-03f;
  q = q * z2 - 7.37332916720468e-03f;
  q = q * z2 - 1.42647390514189e-02f;
  const F h = x * 0.5f;
  return h * (z * p / q) + h;
}

// Float lanes rounded to bfloat16 in the upper half of each 32-bit lane (nearest even); the
// lower half is left to mask off. For floats computed from bfloat16 inputs: a NaN among them
// has its lower 16 bits clear (an input's payload, or the default NaN), so the rounding
// cannot carry out of its mantissa.
template <class F>
OSPREY_INLINE typename Bf16Lanes<F>::U bf16_rounded_high(F v) {
  using U = typename Bf16Lanes<F>::U;
  const U u = std::bit_cast<U>(v);
  return u + 0x7fffu + ((u >> 16) & 1u);
}

template <class F, class I, bool kTanh>
OSPREY_INLINE F gelu_fast_of(F x) {
  if constexpr (kTanh) return gelu_tanh_of<F, I>(x);
  else return gelu_erf_rational_of<F>(x);
}

// Gelu in place over 2W float32 (T = float) or 2W bfloat16 bits (T = uint16_t): the erf form
// through gelu_erf_rational_of, the tanh form as gelu_tanh_of. bfloat16 pairs are read as one
// 32-bit lane, the even element in its lower half and the odd one in its upper half: widened
// by a shift and a mask and narrowed back the same way, with no shuffles (the generic
// widening and narrowing conversions lowered to several).
template <class F, class I, bool kTanh, class T>
OSPREY_INLINE void gelu_fast_pair(T* p) {
  constexpr int W = kWidth<F>;
  if constexpr (std::is_same_v<T, float>) {
    store<F>(p, gelu_fast_of<F, I, kTanh>(load<F>(p)));
    store<F>(p + W, gelu_fast_of<F, I, kTanh>(load<F>(p + W)));
  } else {
    using U = typename Bf16Lanes<F>::U;
    U u;
    std::memcpy(&u, p, sizeof u);
    const F even = gelu_fast_of<F, I, kTanh>(std::bit_cast<F>(u << 16));
    const F odd = gelu_fast_of<F, I, kTanh>(std::bit_cast<F>(u & 0xffff0000u));
    const U r = (bf16_rounded_high(even) >> 16) | (bf16_rounded_high(odd) & 0xffff0000u);
    std::memcpy(p, &r, sizeof r);
  }
}

// Over n elements; the tail goes through one zero-padded block.
template <class F, class I, bool kTanh, class T>
OSPREY_INLINE void gelu_fast_loop(T* y, int64_t n) {
  constexpr int B = 2 * kWidth<F>;
  int64_t k = 0;
  for (; k + B <= n; k += B) gelu_fast_pair<F, I, kTanh>(y + k);
  if (k < n) {
    T tail[B] = {};
    std::memcpy(tail, y + k, sizeof(T) * static_cast<size_t>(n - k));
    gelu_fast_pair<F, I, kTanh>(tail);
    std::memcpy(y + k, tail, sizeof(T) * static_cast<size_t>(n - k));
  }
}

// The kernels as types, so that one set of target variants below serves them all. F and I are
// the vector types of the variant (softmax uses them; the others vectorize plain loops).
// Pixels [begin, end) of `planes` planes of `plane` floats, interleaved: y[q * planes + c] =
// x[c * plane + q]. A compile-time plane count lets the vectorizer turn the inner loop into
// permutes; others take the general loop.
template <int P>
OSPREY_INLINE void interleave_fixed(const float* __restrict x, float* __restrict y, int64_t plane,
                                    int64_t begin, int64_t end) {
  for (int64_t q = begin; q < end; ++q)
    for (int c = 0; c < P; ++c) y[q * P + c] = x[c * plane + q];
}

OSPREY_INLINE void interleave_impl(const float* x, float* y, int64_t planes, int64_t plane,
                                   int64_t begin, int64_t end) {
  switch (planes) {
    case 1:
      std::memcpy(y + begin, x + begin, sizeof(float) * static_cast<size_t>(end - begin));
      return;
    case 2: return interleave_fixed<2>(x, y, plane, begin, end);
    case 3: return interleave_fixed<3>(x, y, plane, begin, end);
    case 4: return interleave_fixed<4>(x, y, plane, begin, end);
    default:
      for (int64_t q = begin; q < end; ++q)
        for (int64_t c = 0; c < planes; ++c) y[q * planes + c] = x[c * plane + q];
  }
}

struct LayerNormKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    layer_norm_impl(a...);
  }
};
struct GroupNormKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    group_norm_impl(a...);
  }
};
struct SumMiddleKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    sum_middle_impl(a...);
  }
};
struct MaxPoolKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    max_pool_impl<F>(a...);  // T from the pointers: float, bfloat16 bits, uint8 or int8
  }
};
struct InterleaveKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    interleave_impl(a...);
  }
};
struct SigmoidKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    sigmoid_impl<F, I>(a...);
  }
};
struct TanhKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    tanh_impl<F, I>(a...);
  }
};
struct ExpKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    exp_impl<F, I>(a...);
  }
};
struct GeluKernel {
  template <class F, class I>
  OSPREY_INLINE static void run(const float* x, float* y, int64_t n, bool tanh_form) {
    gelu_impl<F, I>(x, y, n, tanh_form);
  }
};
struct GeluFastKernel {
  template <class F, class I, class T>
  OSPREY_INLINE static void run(T* y, int64_t n, bool tanh_form) {
    if (tanh_form) gelu_fast_loop<F, I, true>(y, n);
    else gelu_fast_loop<F, I, false>(y, n);
  }
};
struct MinMaxKernel {
  template <class F, class I>
  OSPREY_INLINE static void run(const float* x, int64_t n, float* lo, float* hi) {
    min_max_impl<F>(x, n, lo, hi);
  }
};
struct QuantizeKernel {
  template <class F, class I, class Q>
  OSPREY_INLINE static void run(const float* x, Q* y, int64_t n, float scale, int32_t zp) {
    quantize_impl<F, I>(x, y, n, scale, zp);
  }
};
struct DequantizeKernel {
  template <class F, class I, class Q>
  OSPREY_INLINE static void run(const Q* x, float* y, int64_t n, float scale, int32_t zp) {
    dequantize_impl<F, I>(x, y, n, scale, zp);
  }
};
struct QLinearAddKernel {
  template <class F, class I, class A, class B, class Q>
  OSPREY_INLINE static void run(const A* a, const B* b, Q* y, int64_t n, const QAddParams* p) {
    qlinear_add_impl<F, I>(a, b, y, n, p);
  }
};
struct BinaryRowKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(BinaryOp op, A... a) {
    switch (op) {
      case BinaryOp::kAdd: return binary_row_op<F, I, BinaryOp::kAdd>(a...);
      case BinaryOp::kSub: return binary_row_op<F, I, BinaryOp::kSub>(a...);
      case BinaryOp::kMul: return binary_row_op<F, I, BinaryOp::kMul>(a...);
      case BinaryOp::kDiv: return binary_row_op<F, I, BinaryOp::kDiv>(a...);
      case BinaryOp::kMax: return binary_row_op<F, I, BinaryOp::kMax>(a...);
      case BinaryOp::kMin: return binary_row_op<F, I, BinaryOp::kMin>(a...);
    }
  }
};
struct ArgExtremeKernel {
  template <class F, class I>
  OSPREY_INLINE static void run(bool min, const float* x, int64_t* y, int64_t r, int64_t inner, int64_t b_begin,
                                int64_t b_end, bool last) {
    if (inner == 1) {
      if (min) arg_extreme_rows_impl<F, I, true>(x, y, b_begin, b_end, r, last);
      else arg_extreme_rows_impl<F, I, false>(x, y, b_begin, b_end, r, last);
    } else {
      if (min) arg_extreme_middle_impl<F, I, true>(x, y, r, inner, b_begin, b_end, last);
      else arg_extreme_middle_impl<F, I, false>(x, y, r, inner, b_begin, b_end, last);
    }
  }
};
struct CumSumKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    cumsum_middle_impl(a...);
  }
};
struct ExtremeMiddleKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(bool min, A... a) {
    if (min) extreme_middle_impl<F, I, true>(a...);
    else extreme_middle_impl<F, I, false>(a...);
  }
};
struct ExtremeRowsKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(bool min, A... a) {
    if (min) extreme_rows_impl<F, I, true>(a...);
    else extreme_rows_impl<F, I, false>(a...);
  }
};
struct SoftmaxKernel {
  template <class F, class I, class... A>
  OSPREY_INLINE static void run(A... a) {
    softmax_impl<F, I>(a...);
  }
};

// Kernels whose run is impl<F, I>(arguments...).
#define OSPREY_FI_KERNEL(Name, impl)               \
  struct Name {                                    \
    template <class F, class I, class... A>        \
    OSPREY_INLINE static void run(A... a) {        \
      impl<F, I>(a...);                            \
    }                                              \
  };
OSPREY_FI_KERNEL(LstmCellKernel, lstm_cell_impl)
OSPREY_FI_KERNEL(GruCellLbrKernel, gru_cell_lbr_impl)
OSPREY_FI_KERNEL(GruResetKernel, gru_reset_impl)
OSPREY_FI_KERNEL(GruUpdateKernel, gru_update_impl)
OSPREY_FI_KERNEL(RnnCellKernel, rnn_cell_impl)
OSPREY_FI_KERNEL(UnaryRowKernel, unary_row_impl)
OSPREY_FI_KERNEL(SoftmaxMiddleKernel, softmax_middle_impl)
#undef OSPREY_FI_KERNEL

template <class Kernel, class... A>
__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma"))) void run_avx512(A... a) {
  Kernel::template run<F16, I16>(a...);
}
template <class Kernel, class... A>
__attribute__((target("avx2,fma"))) void run_avx2(A... a) {
  Kernel::template run<F8, I8>(a...);
}
template <class Kernel, class... A>
void run_generic(A... a) {
  Kernel::template run<F4, I4>(a...);
}

template <class Kernel, class... A>
void dispatch(VectorIsa isa, A... a) {
  switch (isa) {
    case VectorIsa::avx512: return run_avx512<Kernel>(a...);
    case VectorIsa::avx2: return run_avx2<Kernel>(a...);
    case VectorIsa::generic: return run_generic<Kernel>(a...);
  }
}

}  // namespace

const char* vector_isa_name(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::generic: return "generic";
    case VectorIsa::avx2: return "avx2";
    case VectorIsa::avx512: return "avx512";
  }
  return "?";
}

bool vector_isa_supported(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::generic: return true;
    case VectorIsa::avx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case VectorIsa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("fma");
  }
  return false;
}

VectorIsa best_vector_isa() {
  static const VectorIsa best = vector_isa_supported(VectorIsa::avx512) ? VectorIsa::avx512
                                : vector_isa_supported(VectorIsa::avx2) ? VectorIsa::avx2
                                                                        : VectorIsa::generic;
  return best;
}

void layer_norm_rows(VectorIsa isa, const float* x, float* y, int64_t rows, int64_t m,
                     const float* scale, const float* bias, double eps) {
  dispatch<LayerNormKernel>(isa, x, y, rows, m, scale, bias, eps);
}

void group_norm_rows(VectorIsa isa, const float* x, float* y, int64_t rows, int64_t cg, int64_t m,
                     const float* scale, const float* bias, bool per_channel, int64_t groups, int64_t first_row,
                     double eps) {
  dispatch<GroupNormKernel>(isa, x, y, rows, cg, m, scale, bias, per_channel, groups, first_row, eps);
}

void sum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t o_begin, int64_t o_end,
                     int64_t r, int64_t inner, double mult) {
  dispatch<SumMiddleKernel>(isa, x, y, o_begin, o_end, r, inner, mult);
}

void softmax_rows(VectorIsa isa, float* s, int64_t rows, int64_t n, const float* mask,
                  int64_t mask_row_stride, int64_t mask_key_stride, float* inv_sums) {
  dispatch<SoftmaxKernel>(isa, s, rows, n, mask, mask_row_stride, mask_key_stride, inv_sums);
}

void unary_row(VectorIsa isa, UnaryOp op, const float* x, float* y, int64_t n, float alpha, float beta) {
  dispatch<UnaryRowKernel>(isa, op, x, y, n, alpha, beta);
}

void binary_row(VectorIsa isa, BinaryOp op, const float* a, bool a_vec, const float* b, bool b_vec,
                float* y, int64_t n) {
  dispatch<BinaryRowKernel>(isa, op, a, a_vec, b, b_vec, y, n);
}

int64_t column_blocks(int64_t inner) { return (inner + kColumnBlock - 1) / kColumnBlock; }

void softmax_middle_axis(VectorIsa isa, const float* x, float* y, int64_t n, int64_t inner,
                         int64_t block_begin, int64_t block_end, bool log) {
  dispatch<SoftmaxMiddleKernel>(isa, x, y, n, inner, block_begin, block_end, log);
}

void extreme_middle_axis(VectorIsa isa, const float* x, float* y, int64_t r, int64_t inner,
                         int64_t block_begin, int64_t block_end, bool min) {
  if (inner == 1)
    dispatch<ExtremeRowsKernel>(isa, min, x, y, block_begin, block_end, r);
  else
    dispatch<ExtremeMiddleKernel>(isa, min, x, y, r, inner, block_begin, block_end);
}

void arg_extreme_middle_axis(VectorIsa isa, const float* x, int64_t* y, int64_t r, int64_t inner,
                             int64_t block_begin, int64_t block_end, bool min, bool last) {
  dispatch<ArgExtremeKernel>(isa, min, x, y, r, inner, block_begin, block_end, last);
}

void cumsum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t n, int64_t inner,
                        int64_t block_begin, int64_t block_end, bool exclusive, bool reverse) {
  dispatch<CumSumKernel>(isa, x, y, n, inner, block_begin, block_end, exclusive, reverse);
}

void sigmoid(VectorIsa isa, const float* x, float* y, int64_t n) {
  dispatch<SigmoidKernel>(isa, x, y, n);
}

void tanh_row(VectorIsa isa, const float* x, float* y, int64_t n) { dispatch<TanhKernel>(isa, x, y, n); }

void exp_row(VectorIsa isa, const float* x, float* y, int64_t n) { dispatch<ExpKernel>(isa, x, y, n); }

void gelu(VectorIsa isa, const float* x, float* y, int64_t n, bool tanh_form) {
  dispatch<GeluKernel>(isa, x, y, n, tanh_form);
}

void gelu_fast_inplace(VectorIsa isa, void* y, int64_t n, bool bf16, bool tanh_form) {
  if (bf16) dispatch<GeluFastKernel>(isa, static_cast<uint16_t*>(y), n, tanh_form);
  else dispatch<GeluFastKernel>(isa, static_cast<float*>(y), n, tanh_form);
}

void lstm_cell(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
               int64_t hr_gate_stride, float* c, float* h, int64_t n, float clip) {
  dispatch<LstmCellKernel>(isa, x, x_gate_stride, hr, hr_gate_stride, c, h, n, clip);
}

void gru_cell_lbr(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
                  int64_t hr_gate_stride, const float* rb_h, const float* h_prev, float* h, int64_t n,
                  float clip) {
  dispatch<GruCellLbrKernel>(isa, x, x_gate_stride, hr, hr_gate_stride, rb_h, h_prev, h, n, clip);
}

void gru_reset(VectorIsa isa, const float* x, int64_t x_gate_stride, const float* hr,
               int64_t hr_gate_stride, const float* h, float* z, float* rh, int64_t n, float clip) {
  dispatch<GruResetKernel>(isa, x, x_gate_stride, hr, hr_gate_stride, h, z, rh, n, clip);
}

void gru_update(VectorIsa isa, const float* x_h, const float* hrh, const float* z, float* h,
                int64_t H, float clip) {
  dispatch<GruUpdateKernel>(isa, x_h, hrh, z, h, H, clip);
}

void rnn_cell(VectorIsa isa, const float* x, const float* hr, float* h, int64_t H, float clip) {
  dispatch<RnnCellKernel>(isa, x, hr, h, H, clip);
}

void min_max_row(VectorIsa isa, const float* x, int64_t n, float* lo, float* hi) {
  dispatch<MinMaxKernel>(isa, x, n, lo, hi);
}

void quantize_row(VectorIsa isa, const float* x, void* y, int64_t n, float scale, int32_t zp,
                  bool is_signed) {
  if (is_signed) dispatch<QuantizeKernel>(isa, x, static_cast<int8_t*>(y), n, scale, zp);
  else dispatch<QuantizeKernel>(isa, x, static_cast<uint8_t*>(y), n, scale, zp);
}

template <class A, class B>
void qlinear_add_typed(VectorIsa isa, const A* a, const B* b, void* y, int64_t n, const QAddParams& p) {
  if (p.y_signed) dispatch<QLinearAddKernel>(isa, a, b, static_cast<int8_t*>(y), n, &p);
  else dispatch<QLinearAddKernel>(isa, a, b, static_cast<uint8_t*>(y), n, &p);
}

void qlinear_add_row(VectorIsa isa, const void* a, const void* b, void* y, int64_t n,
                     const QAddParams& p) {
  const auto* au = static_cast<const uint8_t*>(a);
  const auto* bu = static_cast<const uint8_t*>(b);
  const auto* as = static_cast<const int8_t*>(a);
  const auto* bs = static_cast<const int8_t*>(b);
  if (p.a_signed) {
    if (p.b_signed) qlinear_add_typed(isa, as, bs, y, n, p);
    else qlinear_add_typed(isa, as, bu, y, n, p);
  } else {
    if (p.b_signed) qlinear_add_typed(isa, au, bs, y, n, p);
    else qlinear_add_typed(isa, au, bu, y, n, p);
  }
}

void dequantize_row(VectorIsa isa, const void* x, float* y, int64_t n, float scale, int32_t zp,
                    bool is_signed) {
  if (is_signed) dispatch<DequantizeKernel>(isa, static_cast<const int8_t*>(x), y, n, scale, zp);
  else dispatch<DequantizeKernel>(isa, static_cast<const uint8_t*>(x), y, n, scale, zp);
}

void max_pool_nhwc_rows(VectorIsa isa, const float* x, float* y, const PoolGeometry& g,
                        int64_t row_begin, int64_t row_end) {
  dispatch<MaxPoolKernel>(isa, x, y, &g, row_begin, row_end);
}

void max_pool_nhwc_rows_bytes(VectorIsa isa, const void* x, void* y, bool is_signed, const PoolGeometry& g,
                              int64_t row_begin, int64_t row_end) {
  if (is_signed)
    dispatch<MaxPoolKernel>(isa, static_cast<const int8_t*>(x), static_cast<int8_t*>(y), &g, row_begin, row_end);
  else
    dispatch<MaxPoolKernel>(isa, static_cast<const uint8_t*>(x), static_cast<uint8_t*>(y), &g, row_begin,
                                 row_end);
}

void max_pool_nhwc_rows_bf16(VectorIsa isa, const uint16_t* x, uint16_t* y, const PoolGeometry& g,
                             int64_t row_begin, int64_t row_end) {
  dispatch<MaxPoolKernel>(isa, x, y, &g, row_begin, row_end);
}

void interleave_planes(VectorIsa isa, const float* x, float* y, int64_t planes, int64_t plane,
                       int64_t begin, int64_t end) {
  dispatch<InterleaveKernel>(isa, x, y, planes, plane, begin, end);
}

}  // namespace osprey::cpu
