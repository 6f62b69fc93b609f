#include "kernels/cpu/panel_product.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/large_pages.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::cpu {
namespace {

constexpr int64_t kPanel = kPanelColumns;
constexpr int kRows = 8;        // rows per register tile (24 accumulators)
// Rows of B per block: 768 ran BERT-base's products fastest (256: 149-153 GFLOP/s, 384:
// 158-160, 768: 165-166, 1536: 150 on 3072 -> 768; Ice Lake, one core, B from memory).
constexpr int64_t kBlockRows = 768;

// Below 4 rows the product is bound by reading B, and the hardware's stream prefetcher
// (B is one sequential stream per thread) does better alone: at 1 row, BERT-base's shapes took
// 1.02-1.10x oneDNN's time with the software prefetch, 0.97-1.02x without; at 8 rows the
// prefetch still paid (0.84-0.90x against 0.89-0.94x).
constexpr int64_t kPrefetchMinRows = 4;

// Every function that touches 512-bit vectors carries the target.
#define OSPREY_PANEL __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))

// Where one thread's pass over the blocks is in prefetching the next block.
struct Prefetch {
  const char* at = nullptr;
  const char* end = nullptr;
  int per_step = 0;  // lines per 4 k-steps
};

struct Masks {
  __mmask16 m[3];
};

// What the last block of K does before Y is stored.
struct Epilogue {
  bool clamp = false;
  float lo = 0, hi = 0;
};

// Every loop over the tile's rows and vectors is unrolled (the pragmas): a loop GCC left rolled
// kept the accumulators in an array on the stack, stored and reloaded around the k loop, about
// 215 cycles a tile. A product with a short K pays that on every tile: 16 -> 96 channels over
// 2048 pixels ran at 71-75 GFLOP/s rather than 86-91 (osprey_tile_bench --only products --rows
// 2048, Zen 4, one core), MiniLM's products took 2% longer, MobileNetV2's convolutions 2.7%.
//
// MR rows times NV vectors of 16 columns (the last panel of B may be 16 or 32 wide). With
// kHalf the last vector is 8 columns, a 256-bit one (the panel's 8 columns past it are
// padding): where 512-bit FMAs run in two halves, a 24- or 40-column tail then costs 1.5 or
// 2.5 vectors' FMAs rather than 2 or 3.
template <int MR, int NV, bool kHalf = false>
OSPREY_PANEL void tile(const float* a, int64_t lda, const float* blk, int64_t kc, float* y,
                              int64_t ldy, const float* bias, float beta, bool first, bool last,
                              const Masks& mk, const Epilogue& ep, Prefetch& pf) {
  constexpr int64_t width = 16 * NV;
  constexpr int NF = kHalf ? NV - 1 : NV;  // full vectors
  constexpr int NH = kHalf ? 1 : 0;        // the half vector (acc_h's one column)
  // The masks as locals: read through the reference, they were reloaded before every store.
  const __mmask16 m[3] = {mk.m[0], mk.m[1], mk.m[2]};
  const __mmask8 mh = static_cast<__mmask8>(m[NV - 1]);
  __m512 acc[MR][NF > 0 ? NF : 1];
  __m256 acc_h[MR][1];
  if (first) {
    __m512 b[NF > 0 ? NF : 1];
#pragma GCC unroll 8
    for (int j = 0; j < NF; ++j)
      b[j] = bias ? _mm512_maskz_loadu_ps(m[j], bias + 16 * j) : _mm512_setzero_ps();
    const __m256 bh = bias && NH ? _mm256_maskz_loadu_ps(mh, bias + 16 * NF) : _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NF; ++j) acc[i][j] = b[j];
      if constexpr (NH) acc_h[i][0] = bh;
    }
    if (beta != 0.0f) {
      const __m512 vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < NF; ++j)
          acc[i][j] = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m[j], y + i * ldy + 16 * j), acc[i][j]);
        if constexpr (NH)
          acc_h[i][0] = _mm256_fmadd_ps(_mm512_castps512_ps256(vb),
                                        _mm256_maskz_loadu_ps(mh, y + i * ldy + 16 * NF), acc_h[i][0]);
      }
    }
  } else {
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NF; ++j) acc[i][j] = _mm512_maskz_loadu_ps(m[j], y + i * ldy + 16 * j);
      if constexpr (NH) acc_h[i][0] = _mm256_maskz_loadu_ps(mh, y + i * ldy + 16 * NF);
    }
  }
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    for (int q = 0; q < pf.per_step && pf.at < pf.end; ++q, pf.at += 64) _mm_prefetch(pf.at, _MM_HINT_T1);
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) {
      const float* w = blk + (k + u) * width;
      __m512 wv[NF > 0 ? NF : 1];
#pragma GCC unroll 8
      for (int j = 0; j < NF; ++j) wv[j] = _mm512_load_ps(w + 16 * j);
      const __m256 wh = NH ? _mm256_load_ps(w + 16 * NF) : _mm256_setzero_ps();
#pragma GCC unroll 8
      for (int i = 0; i < MR; ++i) {
        const __m512 x = _mm512_set1_ps(a[i * lda + k + u]);
#pragma GCC unroll 8
        for (int j = 0; j < NF; ++j) acc[i][j] = _mm512_fmadd_ps(x, wv[j], acc[i][j]);
        if constexpr (NH) acc_h[i][0] = _mm256_fmadd_ps(_mm512_castps512_ps256(x), wh, acc_h[i][0]);
      }
    }
  }
  for (; k < kc; ++k) {
    const float* w = blk + k * width;
    __m512 wv[NF > 0 ? NF : 1];
#pragma GCC unroll 8
    for (int j = 0; j < NF; ++j) wv[j] = _mm512_load_ps(w + 16 * j);
    const __m256 wh = NH ? _mm256_load_ps(w + 16 * NF) : _mm256_setzero_ps();
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512 x = _mm512_set1_ps(a[i * lda + k]);
#pragma GCC unroll 8
      for (int j = 0; j < NF; ++j) acc[i][j] = _mm512_fmadd_ps(x, wv[j], acc[i][j]);
      if constexpr (NH) acc_h[i][0] = _mm256_fmadd_ps(_mm512_castps512_ps256(x), wh, acc_h[i][0]);
    }
  }
  if (last && ep.clamp) {
    const __m512 lo = _mm512_set1_ps(ep.lo), hi = _mm512_set1_ps(ep.hi);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
      for (int j = 0; j < NF; ++j) acc[i][j] = _mm512_min_ps(_mm512_max_ps(acc[i][j], lo), hi);
      if constexpr (NH)
        acc_h[i][0] = _mm256_min_ps(_mm256_max_ps(acc_h[i][0], _mm512_castps512_ps256(lo)),
                                    _mm512_castps512_ps256(hi));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
#pragma GCC unroll 8
    for (int j = 0; j < NF; ++j) _mm512_mask_storeu_ps(y + i * ldy + 16 * j, m[j], acc[i][j]);
    if constexpr (NH) _mm256_mask_storeu_ps(y + i * ldy + 16 * NF, mh, acc_h[i][0]);
  }
}

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, const float*,
                        float, bool, bool, const Masks&, const Epilogue&, Prefetch&);
template <int NV, bool kHalf>
constexpr TileFn kTilesOf[kRows + 1] = {
    nullptr,              tile<1, NV, kHalf>, tile<2, NV, kHalf>, tile<3, NV, kHalf>,
    tile<4, NV, kHalf>,   tile<5, NV, kHalf>, tile<6, NV, kHalf>, tile<7, NV, kHalf>,
    tile<8, NV, kHalf>};
// kTiles[half][vectors][rows]
constexpr const TileFn* kTiles[2][4] = {
    {nullptr, kTilesOf<1, false>, kTilesOf<2, false>, kTilesOf<3, false>},
    {nullptr, kTilesOf<1, true>, kTilesOf<2, true>, kTilesOf<3, true>}};

// The work in units of one panel's one tile of rows, panel-major: unit u is panel u / tiles,
// rows of tile u % tiles. One thread's share is units [u0, u1) of every block, blocks in order.
void run_units(const PanelB& b, const float* a, int64_t M, int64_t lda, const float* bias,
               float beta, float* y, const Epilogue& ep, int64_t u0, int64_t u1) {
  if (u0 >= u1) return;
  const int64_t tiles = (M + kRows - 1) / kRows;
  const int64_t p_first = u0 / tiles, p_last = (u1 - 1) / tiles;
  for (int64_t k0 = 0; k0 < b.K; k0 += b.kc) {
    const int64_t kc = std::min(b.kc, b.K - k0);
    const float* block0 = b.data + k0 * b.padded_n;  // this block row's first panel
    const int64_t next_kc = std::min(b.kc, b.K - (k0 + kc));
    for (int64_t p = p_first; p <= p_last; ++p) {
      const int64_t t0 = p == p_first ? u0 % tiles : 0, t1 = p == p_last ? (u1 - 1) % tiles + 1 : tiles;
      const int64_t column = panel_column(b, p);
      const float* blk = block0 + column * kc;
      // The next block this thread multiplies, prefetched across this one's tiles.
      const float* next = nullptr;
      int64_t next_floats = 0;
      if (p < p_last) {
        next = blk + kc * panel_width(b, p), next_floats = kc * panel_width(b, p + 1);
      } else if (next_kc > 0) {
        next = b.data + (k0 + kc) * b.padded_n + panel_column(b, p_first) * next_kc;
        next_floats = next_kc * panel_width(b, p_first);
      }
      Prefetch pf;
      if (next && M >= kPrefetchMinRows) {
        const int64_t lines = next_floats * 4 / 64, steps = (t1 - t0) * (kc / 4);
        pf.at = reinterpret_cast<const char*>(next);
        pf.end = pf.at + next_floats * 4;
        pf.per_step = steps > 0 ? static_cast<int>((lines + steps - 1) / steps) : 0;
      }
      const int64_t vectors = panel_width(b, p) / 16;
      Masks mk;
      for (int j = 0; j < 3; ++j) {
        const int64_t valid = std::clamp<int64_t>(b.N - column - 16 * j, 0, 16);
        mk.m[j] = static_cast<__mmask16>((1u << valid) - 1u);
      }
      const bool half = b.half_tail && b.N - column - 16 * (vectors - 1) <= 8;
      const TileFn* tiles_of = kTiles[half][vectors];
      const float* pbias = bias ? bias + column : nullptr;
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t r0 = t * kRows, rows = std::min<int64_t>(kRows, M - r0);
        tiles_of[rows](a + r0 * lda + k0, lda, blk, kc, y + r0 * b.N + column, b.N, pbias, beta,
                       k0 == 0, k0 + kc == b.K, mk, ep, pf);
      }
    }
  }
}

// The unit where share i of n begins: the work is balanced by columns times rows (a panel's
// tiles cost its width times their rows), so that two threads on ResNet50's 512 columns (ten
// panels of 48 and one of 32) split panel 5's tiles rather than take 240 and 272 columns.
int64_t share_begin(const PanelB& b, int64_t M, int64_t i, int64_t n) {
  const int64_t tiles = (M + kRows - 1) / kRows;
  if (i == 0) return 0;
  if (i == n) return b.panels * tiles;
  const double target = static_cast<double>(b.padded_n) * static_cast<double>(M) * static_cast<double>(i) / static_cast<double>(n);
  int64_t p = 0;
  while (p + 1 < b.panels && static_cast<double>(panel_column(b, p + 1) * M) <= target) ++p;
  const double inside = (target - static_cast<double>(panel_column(b, p) * M)) /
                        static_cast<double>(panel_width(b, p) * kRows);
  const int64_t t = std::clamp<int64_t>(std::llround(inside), 0, tiles);
  return p * tiles + t;
}

}  // namespace

bool panel_product_supported() { return vector_isa_supported(VectorIsa::avx512); }

PanelB panel_b_geometry(int64_t K, int64_t N) {
  PanelB pb;
  pb.K = K, pb.N = N;
  const int64_t blocks = (K + kBlockRows - 1) / kBlockRows;
  pb.kc = (K + blocks - 1) / blocks;  // even blocks
  pb.panels = (N + kPanel - 1) / kPanel;
  pb.last_width = (N - (pb.panels - 1) * kPanel + 15) / 16 * 16;
  if (pb.last_width == 16 && pb.panels >= 2) pb.paired_tail = true, pb.last_width = 32;
  pb.padded_n = panel_column(pb, pb.panels - 1) + pb.last_width;
  pb.half_tail = avx512_in_halves();
  return pb;
}

PanelB make_panel_b(int64_t K, int64_t N) {
  PanelB pb = panel_b_geometry(K, N);
  const size_t bytes = static_cast<size_t>(K * pb.padded_n) * sizeof(float);
  float* out = static_cast<float*>(allocate_large(bytes));
  if (!out) throw std::bad_alloc();
  pb.storage = std::shared_ptr<void>(out, [](void* q) { free_large(q); });
  pb.data = out;
  return pb;
}

PanelB pack_panel_b(const float* b, int64_t K, int64_t N, int64_t k_stride, int64_t n_stride) {
  PanelB pb = make_panel_b(K, N);
  fill_panel_b(pb, [&](int64_t k, int64_t n0, int64_t width, float* out) {
    const float* from = b + k * k_stride + n0 * n_stride;
    if (n_stride == 1) {
      std::memcpy(out, from, static_cast<size_t>(width) * sizeof(float));
    } else {
      for (int64_t j = 0; j < width; ++j) out[j] = from[j * n_stride];
    }
  });
  return pb;
}

void panel_product(const PanelB& b, const float* a, int64_t M, int64_t lda, const float* bias,
                   float beta, float* y, int threads, bool clamp, float lo, float hi) {
  Epilogue ep;
  ep.clamp = clamp, ep.lo = lo, ep.hi = hi;
  const int64_t tiles = (M + kRows - 1) / kRows, units = b.panels * tiles;
  if (units <= 0) return;
  const int64_t team = omp_in_parallel() ? 1 : std::clamp<int64_t>(threads, 1, units);
  if (team == 1) return run_units(b, a, M, lda, bias, beta, y, ep, 0, units);
#pragma omp parallel num_threads(static_cast<int>(team))
  {
    const int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    run_units(b, a, M, lda, bias, beta, y, ep, share_begin(b, M, t, n), share_begin(b, M, t + 1, n));
  }
}

}  // namespace osprey::cpu
