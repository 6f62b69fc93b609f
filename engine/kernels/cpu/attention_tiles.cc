// Register tiles as GCC generic vectors in always-inline templates (attention_tiles_impl.inc),
// compiled once per ISA inside a target pragma region. The multiply-adds contract to FMA
// (this file is built with -ffp-contract=fast), so a sum's rounding differs from the
// oracle's by the usual few ulp of a reordered dot product.
#include "kernels/cpu/attention_tiles.h"

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
    if (transposed) {  // B^T rows are B's columns: write each with a stride of the panel width
      for (int64_t jj = 0; jj < width; ++jj) {
        const float* col = src + (j0 + jj) * ld;
        for (int64_t p = 0; p < k; ++p) panel[p * kPanelWidth + jj] = scale * col[p];
      }
      for (int64_t jj = width; jj < kPanelWidth; ++jj)
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

void panel_product(VectorIsa isa, const float* a, int64_t lda, int64_t m, int64_t k,
                   const float* panels, int64_t n, float* c, int64_t ldc) {
  switch (isa) {
    case VectorIsa::avx512: return tiles_avx512::product(a, lda, m, k, panels, n, c, ldc);
    case VectorIsa::avx2: return tiles_avx2::product(a, lda, m, k, panels, n, c, ldc);
    case VectorIsa::generic: return tiles_generic::product(a, lda, m, k, panels, n, c, ldc);
  }
}

}  // namespace osprey::cpu
