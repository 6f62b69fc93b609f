// Register tiles as GCC generic vectors in always-inline templates (attention_tiles_impl.inc),
// compiled once per ISA inside a target pragma region. The multiply-adds contract to FMA
// (this file is built with -ffp-contract=fast), so a sum's rounding differs from the
// oracle's by the usual few ulp of a reordered dot product.
#include "kernels/cpu/attention_tiles.h"

#include <algorithm>
#include <cstring>

namespace osprey::cpu {
namespace {

typedef float F4 __attribute__((vector_size(16)));
typedef float F8 __attribute__((vector_size(32)));

namespace tiles_avx512 {
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq,avx512vl,avx512bw,fma")
using TileF = F8;
#include "kernels/cpu/attention_tiles_impl.inc"
#pragma GCC pop_options
}  // namespace tiles_avx512

namespace tiles_avx2 {
#pragma GCC push_options
#pragma GCC target("avx2,fma")
using TileF = F8;
#include "kernels/cpu/attention_tiles_impl.inc"
#pragma GCC pop_options
}  // namespace tiles_avx2

namespace tiles_generic {
using TileF = F4;
#include "kernels/cpu/attention_tiles_impl.inc"
}  // namespace tiles_generic

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
