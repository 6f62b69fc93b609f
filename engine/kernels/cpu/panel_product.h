// A float32 matrix product of our own for a constant B on AVX-512: Y[M,N] = A[M,K] B (+ bias)
// (+ beta Y), B packed once into blocks of kc x 48 columns, 8 x 48 register tiles, and the
// next block of B prefetched into L2 while the current one is multiplied.
//
// Why: a product whose B comes from memory (BERT-base's 340 MB of weights, read once per run)
// spends the first pass over each block of B waiting for it. oneDNN's brgemm matmul and
// brgconv_1x1 ran BERT-base's 128-row products at 139-146 GFLOP/s on an Ice Lake core whose
// FMA peak is 180 (B from memory, osprey_tile_bench --only products); this kernel, with the
// next block already in L2, at 152-166.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

namespace osprey::cpu {

struct PanelB {
  int64_t K = 0, N = 0;
  int64_t kc = 0;      // rows of B per block (the last block may have fewer)
  int64_t panels = 0;      // blocks of 48 columns; the last is last_width wide
  int64_t last_width = 0;  // 16, 32 or 48: the last panel's columns, zero-padded past N
  // The last two panels are 32 columns each where the last would have been 16 (64 = 32 + 32
  // runs on two-vector tiles; a 16-column panel's one-vector tiles load A once per FMA).
  bool paired_tail = false;
  int64_t padded_n = 0;    // the panels' columns together
  // Whether a last panel with 8 or fewer columns past its last full vector of 16 (N = 24 or
  // 40 past a multiple of 48) runs them on 256-bit vectors: set by panel_b_geometry where the
  // CPU runs 512-bit FMAs in two halves (cpu_capabilities.h's avx512_in_halves), where that
  // costs half a 512-bit FMA; either value gives the same Y.
  bool half_tail = false;
  std::shared_ptr<void> storage;
  const float* data = nullptr;  // null: not packed
};

// Whether the CPU runs the kernel (AVX-512F).
bool panel_product_supported();

constexpr int64_t kPanelColumns = 48;  // three 16-lane vectors

// Columns of panel p: 48, the last rounded up to a multiple of 16 (the last two 32 with a
// paired tail).
inline int64_t panel_width(const PanelB& b, int64_t p) {
  if (p + 1 < b.panels) return b.paired_tail && p + 2 == b.panels ? 32 : kPanelColumns;
  return b.last_width;
}
// B's column where panel p starts (also its offset in a block of kc rows, times kc).
inline int64_t panel_column(const PanelB& b, int64_t p) {
  return b.paired_tail && p + 1 == b.panels ? p * kPanelColumns - 16 : p * kPanelColumns;
}

// Packs B [K, N], element (k, n) at b[k * k_stride + n * n_stride]: for each block of kc rows,
// its panels in turn (48 columns; the last 16, 32 or 48, or the last two 32), each kc x width
// row-major.
PanelB pack_panel_b(const float* b, int64_t K, int64_t N, int64_t k_stride, int64_t n_stride);

// The same in two steps, for a B laid out otherwise: make_panel_b allocates (contents
// undefined), and fill_panel_b calls row(k, n0, width, out) to write B's row k, columns
// [n0, n0 + width), to out, for every row of every panel in storage order (the padding past N
// it zeroes itself).
PanelB make_panel_b(int64_t K, int64_t N);
// make_panel_b's layout without the storage (data null): for packing several B of one shape
// into one allocation, each at offset i * K * padded_n.
PanelB panel_b_geometry(int64_t K, int64_t N);
// Writes B's row k (N floats at `row`) where fill_panel_b puts it, across every panel, zeroing
// the padding past N: for packers that make B row by row (pb.data set).
inline void write_panel_b_row(const PanelB& pb, int64_t k, const float* row) {
  const int64_t k0 = k / pb.kc * pb.kc, kc = std::min(pb.kc, pb.K - k0);
  float* block = const_cast<float*>(pb.data) + k0 * pb.padded_n;
  for (int64_t p = 0; p < pb.panels; ++p) {
    const int64_t n0 = panel_column(pb, p), stored = panel_width(pb, p);
    const int64_t width = std::min(stored, pb.N - n0);
    float* out = block + n0 * kc + (k - k0) * stored;
    std::memcpy(out, row + n0, static_cast<size_t>(width) * sizeof(float));
    for (int64_t j = width; j < stored; ++j) out[j] = 0.0f;
  }
}
template <class Row>
void fill_panel_b(PanelB& pb, Row&& row) {
  float* out = const_cast<float*>(pb.data);
  for (int64_t k0 = 0; k0 < pb.K; k0 += pb.kc) {
    const int64_t kc = std::min(pb.kc, pb.K - k0);
    for (int64_t p = 0; p < pb.panels; ++p) {
      const int64_t n0 = panel_column(pb, p), stored = panel_width(pb, p);
      const int64_t width = std::min(stored, pb.N - n0);
      for (int64_t k = k0; k < k0 + kc; ++k, out += stored) {
        row(k, n0, width, out);
        for (int64_t j = width; j < stored; ++j) out[j] = 0.0f;
      }
    }
  }
}

// Y[M, N] (row stride N) = A[M, K] (row stride lda) B (+ bias[N] when bias is not null)
// (+ beta Y as it was, when beta != 0), then clamped to [lo, hi] when `clamp` (a Relu: 0,
// infinity), on up to `threads` OpenMP threads (one when called inside a parallel region):
// each thread takes a run of panels and tiles of rows (panel-major) of about equal columns
// times rows. Y must not overlap A.
void panel_product(const PanelB& b, const float* a, int64_t M, int64_t lda, const float* bias,
                   float beta, float* y, int threads, bool clamp = false, float lo = 0.0f,
                   float hi = 0.0f);

}  // namespace osprey::cpu
