// The attention's two products in bfloat16 (fast mode): operands rounded to bfloat16 (nearest
// even) and multiplied in pairs by AVX512-BF16's dot product, accumulated and returned in
// float32. The same panel scheme as attention_tiles.h, with each panel row holding a pair of
// B's rows: a panel is [ceil(k / 2)][kPanelWidth] 32-bit words, word (t, j) = (B[2t, j],
// B[2t + 1, j]) as two bfloat16 (the first in the low half; 0 past k and past n). A is given
// as rows of pairs too: word (i, t) = (A[i, 2t], A[i, 2t + 1]). Only for CPUs with
// avx512_bf16 (attention_bf16_available); the oracle in the tests is a float loop over the
// rounded operands.
#pragma once

#include <cstdint>

#include "kernels/cpu/attention_tiles.h"

namespace osprey::cpu {

// The CPU runs AVX512-BF16 (and the AVX-512 subsets the kernels use).
bool attention_bf16_available();

// The CPU has AMX-BF16 tiles and the OS granted their state: panel_product_bf16 runs on them.
bool attention_amx_available();

// Fast mode runs the attention in bfloat16 only where that is faster than float32: on AMX
// tiles, or where the CPU's vdpbf16ps outruns its float32 FMA. AMD's cores (Zen 4, Zen 5) do
// twice an FMA's multiply-adds per cycle with it; Intel's cores with two FMA ports issue it on
// one, so without AMX the pairs' packing and rounding make bf16 the slower form there (a Xeon,
// one core, vdpbf16ps: BERT-base's attention 7.2 ms in bf16 against 4.6 ms in float32).
bool attention_bf16_pays();

// The float nearest to x in bfloat16 (ties to even; NaN stays NaN): what the kernels use.
float round_to_bf16(float x);

// 32-bit words of a [k, n] B packed by pack_pairs_bf16.
inline int64_t pair_panel_words(int64_t k, int64_t n) {
  return (k + 1) / 2 * ((n + kPanelWidth - 1) / kPanelWidth * kPanelWidth);
}

// Packs scale * B [k, n] as pair panels (above). B[p, j] is src[p * ld + j], or src[j * ld + p]
// when `transposed` (src holds B^T: [n, k]).
void pack_pairs_bf16(const float* src, int64_t ld, bool transposed, int64_t k, int64_t n,
                     float scale, uint32_t* dst);

// m rows of k floats (row i at a + i * lda) as rows of (k + 1) / 2 pair words, row i at
// dst + i * ldd.
void rows_to_pairs_bf16(const float* a, int64_t lda, int64_t m, int64_t k, uint32_t* dst,
                        int64_t ldd);

// c[i * ldc + j] = row_scale[i] * sum over p < k of A[i, p] B[p, j] for i < m, j < n; `a` is A
// as pair rows (lda words apart), `panels` B as pack_pairs_bf16 wrote it; row_scale is 1 when
// null. c must not overlap a or panels. On AMX tiles where attention_amx_available(), else on
// vdpbf16ps register tiles; the two forms are also callable as such (the tests run both).
void panel_product_bf16(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                        const uint32_t* panels, int64_t n, float* c, int64_t ldc,
                        const float* row_scale = nullptr);
void panel_product_bf16_avx512(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                               const uint32_t* panels, int64_t n, float* c, int64_t ldc,
                               const float* row_scale = nullptr);
void panel_product_bf16_amx(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                            const uint32_t* panels, int64_t n, float* c, int64_t ldc,
                            const float* row_scale = nullptr);

}  // namespace osprey::cpu
