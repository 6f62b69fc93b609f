// The loops live in always-inline templates with no target of their own; each ISA variant is a
// thin function with a target attribute that inlines them, so the same source is vectorized for
// AVX-512, for AVX2+FMA and for baseline x86-64 (SSE2).
#include "kernels/cpu/row_kernels.h"

#include <algorithm>
#include <cmath>

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

// Columns summed per pass over the reduced rows: 512 doubles (4 KiB) of accumulators.
constexpr int64_t kColumnTile = 512;

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

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))
void layer_norm_avx512(const float* x, float* y, int64_t rows, int64_t m, const float* scale,
                       const float* bias, double eps) {
  layer_norm_impl(x, y, rows, m, scale, bias, eps);
}
__attribute__((target("avx2,fma")))
void layer_norm_avx2(const float* x, float* y, int64_t rows, int64_t m, const float* scale,
                     const float* bias, double eps) {
  layer_norm_impl(x, y, rows, m, scale, bias, eps);
}
void layer_norm_generic(const float* x, float* y, int64_t rows, int64_t m, const float* scale,
                        const float* bias, double eps) {
  layer_norm_impl(x, y, rows, m, scale, bias, eps);
}

__attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))
void sum_middle_avx512(const float* x, float* y, int64_t o_begin, int64_t o_end, int64_t r,
                       int64_t inner, double mult) {
  sum_middle_impl(x, y, o_begin, o_end, r, inner, mult);
}
__attribute__((target("avx2,fma")))
void sum_middle_avx2(const float* x, float* y, int64_t o_begin, int64_t o_end, int64_t r,
                     int64_t inner, double mult) {
  sum_middle_impl(x, y, o_begin, o_end, r, inner, mult);
}
void sum_middle_generic(const float* x, float* y, int64_t o_begin, int64_t o_end, int64_t r,
                        int64_t inner, double mult) {
  sum_middle_impl(x, y, o_begin, o_end, r, inner, mult);
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
  switch (isa) {
    case VectorIsa::avx512: return layer_norm_avx512(x, y, rows, m, scale, bias, eps);
    case VectorIsa::avx2: return layer_norm_avx2(x, y, rows, m, scale, bias, eps);
    case VectorIsa::generic: return layer_norm_generic(x, y, rows, m, scale, bias, eps);
  }
}

void sum_middle_axis(VectorIsa isa, const float* x, float* y, int64_t o_begin, int64_t o_end,
                     int64_t r, int64_t inner, double mult) {
  switch (isa) {
    case VectorIsa::avx512: return sum_middle_avx512(x, y, o_begin, o_end, r, inner, mult);
    case VectorIsa::avx2: return sum_middle_avx2(x, y, o_begin, o_end, r, inner, mult);
    case VectorIsa::generic: return sum_middle_generic(x, y, o_begin, o_end, r, inner, mult);
  }
}

}  // namespace osprey::cpu
