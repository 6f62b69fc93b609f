// Register tiles as GCC generic vectors in always-inline templates (attention_tiles_impl.inc),
// compiled once per ISA inside a target pragma region. The multiply-adds contract to FMA
// (this file is built with -ffp-contract=fast), so a sum's rounding differs from the
// oracle's by the usual few ulp of a reordered dot product.
#include "kernels/cpu/attention_tiles.h"

#include <xmmintrin.h>

#include <algorithm>
#include <cstring>

namespace osprey::cpu {
namespace {

#define OSPREY_TILE_IMPL "kernels/cpu/attention_tiles_impl.inc"
#define OSPREY_TILE_AVX512_F TileF16  // one 16-lane register per panel row
#include "kernels/cpu/tile_regions.inc"
#undef OSPREY_TILE_IMPL

}  // namespace

void pack_panels(const float* src, int64_t ld, bool transposed, int64_t k, int64_t n,
                 float scale, float* dst) {
  for (int64_t j0 = 0; j0 < n; j0 += kPanelWidth) {
    const int64_t width = std::min(kPanelWidth, n - j0);
    float* panel = dst + j0 * k;
    if (transposed) {  // B^T rows are B's columns: transposed 4 x 4 at a time (SSE, baseline)
      const __m128 s4 = _mm_set1_ps(scale);
      int64_t jj = 0;
      for (; jj + 4 <= width; jj += 4) {
        const float* c0 = src + (j0 + jj) * ld;
        int64_t p = 0;
        for (; p + 4 <= k; p += 4) {
          __m128 r0 = _mm_loadu_ps(c0 + p), r1 = _mm_loadu_ps(c0 + ld + p),
                 r2 = _mm_loadu_ps(c0 + 2 * ld + p), r3 = _mm_loadu_ps(c0 + 3 * ld + p);
          _MM_TRANSPOSE4_PS(r0, r1, r2, r3);  // r0 = B[p, jj..jj+3], r1 = B[p+1, ...], ...
          float* at = panel + p * kPanelWidth + jj;
          _mm_storeu_ps(at, _mm_mul_ps(r0, s4));
          _mm_storeu_ps(at + kPanelWidth, _mm_mul_ps(r1, s4));
          _mm_storeu_ps(at + 2 * kPanelWidth, _mm_mul_ps(r2, s4));
          _mm_storeu_ps(at + 3 * kPanelWidth, _mm_mul_ps(r3, s4));
        }
        for (; p < k; ++p)
          for (int64_t t = 0; t < 4; ++t) panel[p * kPanelWidth + jj + t] = scale * c0[t * ld + p];
      }
      for (; jj < width; ++jj) {
        const float* col = src + (j0 + jj) * ld;
        for (int64_t p = 0; p < k; ++p) panel[p * kPanelWidth + jj] = scale * col[p];
      }
      for (; jj < kPanelWidth; ++jj)  // past n: zeros
        for (int64_t p = 0; p < k; ++p) panel[p * kPanelWidth + jj] = 0.0f;
    } else {
      for (int64_t p = 0; p < k; ++p) {
        float* row = panel + p * kPanelWidth;
        const float* from = src + p * ld + j0;
        for (int64_t jj = 0; jj < width; ++jj) row[jj] = scale * from[jj];
        std::fill(row + width, row + kPanelWidth, 0.0f);
      }
    }
  }
}

int64_t panel_tile_rows(VectorIsa isa) {
  switch (isa) {
    case VectorIsa::avx512: return tiles_avx512::tile_rows;
    case VectorIsa::avx2: return tiles_avx2::tile_rows;
    case VectorIsa::generic: return tiles_generic::tile_rows;
  }
  return 1;
}

int64_t attention_block_rows(int64_t q_len, int64_t kv_len, VectorIsa isa) {
  constexpr int64_t kBlockScores = 8192;
  const int64_t tile = panel_tile_rows(isa);
  const int64_t tiles = std::max<int64_t>(1, (kBlockScores / std::max<int64_t>(kv_len, 1) + tile - 1) / tile);
  return std::min(q_len, tiles * tile);
}

void panel_product(VectorIsa isa, const float* a, int64_t lda, int64_t m, int64_t k,
                   const float* panels, int64_t n, float* c, int64_t ldc, const float* row_scale) {
  switch (isa) {
    case VectorIsa::avx512: return tiles_avx512::product(a, lda, m, k, panels, n, c, ldc, row_scale);
    case VectorIsa::avx2: return tiles_avx2::product(a, lda, m, k, panels, n, c, ldc, row_scale);
    case VectorIsa::generic: return tiles_generic::product(a, lda, m, k, panels, n, c, ldc, row_scale);
  }
}

}  // namespace osprey::cpu
