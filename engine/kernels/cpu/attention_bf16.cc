// The bfloat16 products of attention_bf16.h, on AVX512-BF16 intrinsics: each step of a register
// tile broadcasts one pair word of A per row and takes one 16-lane pair row per panel, and
// vdpbf16ps adds both products of the pair into the float32 accumulator.
#include "kernels/cpu/attention_bf16.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

namespace osprey::cpu {

bool attention_bf16_available() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                         __builtin_cpu_supports("avx512bf16");
  return ok;
}

bool attention_bf16_pays() {
  static const bool pays =
      attention_bf16_available() && (attention_amx_available() || !__builtin_cpu_is("intel"));
  return pays;
}

float round_to_bf16(float x) {
  if (std::isnan(x)) return x;
  uint32_t u = std::bit_cast<uint32_t>(x);
  u = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
  return std::bit_cast<float>(u);
}

namespace {

// Every function that touches 512-bit vectors carries the target (GCC and clang alike; a
// `#pragma GCC target` region would not reach clang).
#define OSPREY_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))
#define OSPREY_INLINE OSPREY_BF16 inline __attribute__((always_inline))

// Lane mask of the first n (<= 16) lanes.
OSPREY_INLINE __mmask16 first_lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

// Two rows of 16 floats as 16 pair words: lane j = (lo[j], hi[j]) in bfloat16.
OSPREY_INLINE __m512i pair_rows(__m512 lo, __m512 hi) {
  // cvtne2ps gives [lo's 16 bf16 | hi's 16 bf16]; the permute interleaves them.
  const __m512i both = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(hi, lo));
  const __m512i idx = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                       23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  return _mm512_permutexvar_epi16(idx, both);
}

// One row of k floats (times scale) as (k + 1) / 2 pair words.
OSPREY_INLINE void row_to_pairs(const float* a, int64_t k, float scale, uint32_t* dst) {
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t p = 0; p < k; p += 16) {
    const int64_t n = std::min<int64_t>(16, k - p);
    const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(first_lanes(n), a + p), s);
    const __m256i b = reinterpret_cast<__m256i>(_mm512_cvtneps_pbh(v));
    _mm256_mask_storeu_epi32(dst + p / 2, static_cast<__mmask8>(first_lanes((n + 1) / 2)), b);
  }
}

// Rows x (P * 16) of C over kw pair steps from P adjacent panels (each kw * 16 words apart).
template <int R, int P>
OSPREY_INLINE void tile(const uint32_t* a, int64_t lda, const uint32_t* panel, int64_t kw,
                        float* c, int64_t ldc, int64_t width, const float* row_scale) {
  __m512 acc[R][P];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < P; ++v) acc[r][v] = _mm512_setzero_ps();
  for (int64_t t = 0; t < kw; ++t) {
    __m512bh b[P];
#pragma GCC unroll 2
    for (int v = 0; v < P; ++v)
      b[v] = reinterpret_cast<__m512bh>(
          _mm512_loadu_si512(panel + v * kw * kPanelWidth + t * kPanelWidth));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      const __m512bh x =
          reinterpret_cast<__m512bh>(_mm512_set1_epi32(static_cast<int>(a[r * lda + t])));
#pragma GCC unroll 2
      for (int v = 0; v < P; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, b[v]);
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    if (row_scale) {
      const __m512 sr = _mm512_set1_ps(row_scale[r]);
#pragma GCC unroll 2
      for (int v = 0; v < P; ++v) acc[r][v] = _mm512_mul_ps(acc[r][v], sr);
    }
#pragma GCC unroll 2
    for (int v = 0; v < P - 1; ++v) _mm512_storeu_ps(c + r * ldc + v * kPanelWidth, acc[r][v]);
    _mm512_mask_storeu_ps(c + r * ldc + (P - 1) * kPanelWidth, first_lanes(width), acc[r][P - 1]);
  }
}

template <int R, int P>
OSPREY_INLINE void rows_tail(int rows, const uint32_t* a, int64_t lda, const uint32_t* panel,
                             int64_t kw, float* c, int64_t ldc, int64_t width, const float* s) {
  if constexpr (R > 0) {
    if (rows == R) return tile<R, P>(a, lda, panel, kw, c, ldc, width, s);
    rows_tail<R - 1, P>(rows, a, lda, panel, kw, c, ldc, width, s);
  }
}

// 12 rows x 2 panels: 24 accumulators, 2 panel rows, one broadcast (as attention_tiles).
constexpr int kRows = 12;

template <int P>
OSPREY_BF16 void column_block(const uint32_t* a, int64_t lda, int64_t m, int64_t kw,
                              const uint32_t* panel, float* c, int64_t ldc, int64_t width,
                              const float* s) {
  int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    tile<kRows, P>(a + i * lda, lda, panel, kw, c + i * ldc, ldc, width, s ? s + i : nullptr);
  if (i < m)
    rows_tail<kRows - 1, P>(static_cast<int>(m - i), a + i * lda, lda, panel, kw, c + i * ldc, ldc,
                            width, s ? s + i : nullptr);
}

}  // namespace

// The entry points of attention_bf16.h carry the target themselves.
OSPREY_BF16 void pack_pairs_bf16(const float* src, int64_t ld, bool transposed, int64_t k,
                                 int64_t n, float scale, uint32_t* dst) {
  const int64_t kw = (k + 1) / 2;
  const __m512 s = _mm512_set1_ps(scale);
  for (int64_t j0 = 0; j0 < n; j0 += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, n - j0);
    uint32_t* panel = dst + j0 * kw;
    if (transposed) {
      // Column j of B is row j of src: its pairs are adjacent floats. Convert each row, then
      // transpose the 16 x kw words into the panel.
      constexpr int64_t kChunk = 64;  // pair words per pass (128 floats of each row)
      uint32_t rows[kPanelWidth][kChunk];
      for (int64_t t0 = 0; t0 < kw; t0 += kChunk) {
        const int64_t tw = std::min(kChunk, kw - t0);
        for (int64_t jj = 0; jj < kPanelWidth; ++jj) {
          if (jj < width)
            row_to_pairs(src + (j0 + jj) * ld + 2 * t0, std::min(k - 2 * t0, 2 * tw), scale,
                         rows[jj]);
          else
            std::memset(rows[jj], 0, sizeof(uint32_t) * static_cast<size_t>(tw));
        }
        const __m512i idx = _mm512_set_epi32(15 * kChunk, 14 * kChunk, 13 * kChunk, 12 * kChunk,
                                             11 * kChunk, 10 * kChunk, 9 * kChunk, 8 * kChunk,
                                             7 * kChunk, 6 * kChunk, 5 * kChunk, 4 * kChunk,
                                             3 * kChunk, 2 * kChunk, kChunk, 0);
        for (int64_t t = 0; t < tw; ++t)
          _mm512_storeu_si512(panel + (t0 + t) * kPanelWidth,
                              _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), 0xffff, idx,
                                                          &rows[0][t], 4));
      }
    } else {
      const __mmask16 m = first_lanes(width);
      for (int64_t t = 0; t < kw; ++t) {
        const __m512 lo = _mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + 2 * t * ld + j0), s);
        const __m512 hi =
            2 * t + 1 < k ? _mm512_mul_ps(_mm512_maskz_loadu_ps(m, src + (2 * t + 1) * ld + j0), s)
                          : _mm512_setzero_ps();
        _mm512_storeu_si512(panel + t * kPanelWidth, pair_rows(lo, hi));
      }
    }
  }
}

void panel_product_bf16(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                        const uint32_t* panels, int64_t n, float* c, int64_t ldc, const float* s) {
  static const bool amx = attention_amx_available();
  if (amx) return panel_product_bf16_amx(a, lda, m, k, panels, n, c, ldc, s);
  panel_product_bf16_avx512(a, lda, m, k, panels, n, c, ldc, s);
}

OSPREY_BF16 void panel_product_bf16_avx512(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                                           const uint32_t* panels, int64_t n, float* c,
                                           int64_t ldc, const float* s) {
  const int64_t kw = (k + 1) / 2;
  int64_t j0 = 0;
  for (; n - j0 > kPanelWidth; j0 += 2 * kPanelWidth)
    column_block<2>(a, lda, m, kw, panels + j0 * kw, c + j0, ldc,
                    std::min(kPanelWidth, n - j0 - kPanelWidth), s);
  if (j0 < n)
    column_block<1>(a, lda, m, kw, panels + j0 * kw, c + j0, ldc, n - j0, s);
}

OSPREY_BF16 void rows_to_pairs_bf16(const float* a, int64_t lda, int64_t m, int64_t k,
                                    uint32_t* dst, int64_t ldd) {
  for (int64_t i = 0; i < m; ++i) row_to_pairs(a + i * lda, k, 1.0f, dst + i * ldd);
}

#undef OSPREY_INLINE
#undef OSPREY_BF16

}  // namespace osprey::cpu
