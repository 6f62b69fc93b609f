// The two products of an attention head on this machine's vector units: C[m, n] =
// A[m, k] B[k, n] with A read in place (any row stride) and B packed once per head into panels
// of kPanelWidth columns, so that a register tile of rows x kPanelWidth accumulates over k
// with one broadcast of A and kPanelWidth / lanes loads of B per step. Compiled for AVX-512
// (16-lane registers), AVX2+FMA (8 lanes) and baseline x86-64, chosen per call. The
// oracle in the tests is a plain triple loop.
#pragma once

#include <cstdint>

#include "kernels/cpu/row_kernels.h"

namespace osprey::cpu {

constexpr int64_t kPanelWidth = 16;

// Floats that pack_panels writes for a [k, n] B: k rows of n rounded up to kPanelWidth.
inline int64_t panel_floats(int64_t k, int64_t n) {
  return k * ((n + kPanelWidth - 1) / kPanelWidth * kPanelWidth);
}

// Packs scale * B [k, n] as panels: dst[(j / 16) * k * 16 + p * 16 + j % 16] = scale * B[p, j],
// 0 past n. B[p, j] is src[p * ld + j], or src[j * ld + p] when `transposed` (src holds B^T:
// [n, k]). (The attention's score scale rides on K here, out of the product's registers.)
void pack_panels(const float* src, int64_t ld, bool transposed, int64_t k, int64_t n,
                 float scale, float* dst);

// Rows of A per register tile on `isa` (12, 6 or 2): a block of rows that is a multiple of it
// runs on full tiles.
int64_t panel_tile_rows(VectorIsa isa);

// Query rows per block of an attention head with kv_len keys (at most q_len): about 8192
// scores (32 KiB), as whole register tiles of rows. At 128 keys that is 72 rows on AVX-512 (6
// tiles of 12) rather than 64 (5 tiles and one of 4 rows): MiniLM's attention took 2.15
// against 2.28 ms at 1 thread, BERT-base's 8.19 against 8.45 (4.14 against 4.41 at 2 threads)
// on AMD's Zen 4.
int64_t attention_block_rows(int64_t q_len, int64_t kv_len, VectorIsa isa);

// c[i * ldc + j] = row_scale[i] * (sum over p < k of a[i * lda + p] * B[p, j]), for i < m and
// j < n, where `panels` is B as pack_panels wrote it and row_scale is 1 when null. c must not
// overlap a or panels.
void panel_product(VectorIsa isa, const float* a, int64_t lda, int64_t m, int64_t k,
                   const float* panels, int64_t n, float* c, int64_t ldc,
                   const float* row_scale = nullptr);

}  // namespace osprey::cpu
