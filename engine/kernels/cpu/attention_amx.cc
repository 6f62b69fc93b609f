// panel_product_bf16 on AMX tiles (attention_bf16.h): the pair panels are already the layout
// an AMX-BF16 B tile takes (16 rows of 16 pair words, one row per pair of B's rows), and A's
// pair rows are an A tile's rows. Each step multiplies a 16-row block of A by two panels over
// 16 pair words (32 of k) into two 16x16 float32 tiles; k past a multiple of 32 and m past a
// multiple of 16 are padded with zeros in a copy, so every tile is full-sized and one tile
// configuration serves the whole call.
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/attention_bf16.h"

namespace osprey::cpu {
namespace {

#define OSPREY_AMX \
  __attribute__((target("amx-tile,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq")))

constexpr int64_t kTileRows = 16;  // rows of every tile
constexpr int64_t kTileWords = 16;  // 32-bit words per tile row (64 bytes)

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

// Tiles 0-1: C (float32), 2: A, 3-4: B; all 16 rows of 64 bytes.
TileConfig full_tiles() {
  TileConfig t;
  for (int i = 0; i < 5; ++i) {
    t.colsb[i] = 64;
    t.rows[i] = 16;
  }
  return t;
}

bool cpu_has_amx_bf16() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  const bool tile = (d >> 24) & 1u, bf16 = (d >> 22) & 1u;
  return tile && bf16 && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("avx512dq");
}

// Stores rows x cols of the 16 x 16 float block `t` (row stride 16) at c, times row_scale.
OSPREY_AMX inline void store_block(const float* t, int64_t rows, int64_t cols, float* c,
                                   int64_t ldc, const float* row_scale) {
  const __mmask16 mask =
      cols >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << cols) - 1u);
  for (int64_t r = 0; r < rows; ++r) {
    __m512 v = _mm512_load_ps(t + r * 16);
    if (row_scale) v = _mm512_mul_ps(v, _mm512_set1_ps(row_scale[r]));
    _mm512_mask_storeu_ps(c + r * ldc, mask, v);
  }
}

}  // namespace

bool attention_amx_available() {
  // Linux hands out the tile registers' state only on request (once per process).
  static const bool ok = [] {
    if (!cpu_has_amx_bf16()) return false;
    constexpr long kArchReqXcompPerm = 0x1023;
    constexpr long kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return ok;
}

OSPREY_AMX void panel_product_bf16_amx(const uint32_t* a, int64_t lda, int64_t m, int64_t k,
                                       const uint32_t* panels, int64_t n, float* c, int64_t ldc,
                                       const float* row_scale) {
  const int64_t kw = (k + 1) / 2;
  const int64_t kwp = (kw + kTileWords - 1) / kTileWords * kTileWords;  // padded pair words
  const int64_t n_panels = (n + kPanelWidth - 1) / kPanelWidth;
  // B: the panels as they are when kw fills whole tiles, else a copy with zero rows past kw.
  thread_local std::vector<uint32_t> b_pad, a_pad;
  const uint32_t* b = panels;
  if (kwp != kw) {
    b_pad.assign(static_cast<size_t>(n_panels * kwp * kPanelWidth), 0u);
    for (int64_t p = 0; p < n_panels; ++p)
      std::memcpy(b_pad.data() + p * kwp * kPanelWidth, panels + p * kw * kPanelWidth,
                  sizeof(uint32_t) * static_cast<size_t>(kw * kPanelWidth));
    b = b_pad.data();
  }
  a_pad.resize(static_cast<size_t>(kTileRows * kwp));
  alignas(64) float out[2][kTileRows * kTileWords];
  static const TileConfig config = full_tiles();
  _tile_loadconfig(&config);
  for (int64_t i0 = 0; i0 < m; i0 += kTileRows) {
    const int64_t rows = std::min(kTileRows, m - i0);
    // A's block: read in place when it is whole, else copied with zero rows and words.
    const uint32_t* ab = a + i0 * lda;
    int64_t ab_ld = lda;
    if (rows < kTileRows || kwp != kw) {
      std::fill(a_pad.begin(), a_pad.end(), 0u);
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(a_pad.data() + r * kwp, a + (i0 + r) * lda,
                    sizeof(uint32_t) * static_cast<size_t>(kw));
      ab = a_pad.data();
      ab_ld = kwp;
    }
    const float* rs = row_scale ? row_scale + i0 : nullptr;
    for (int64_t p = 0; p < n_panels; p += 2) {
      const bool two = p + 1 < n_panels;
      const uint32_t* b0 = b + p * kwp * kPanelWidth;
      const uint32_t* b1 = b0 + kwp * kPanelWidth;
      _tile_zero(0);
      _tile_zero(1);
      for (int64_t t = 0; t < kwp; t += kTileWords) {
        _tile_loadd(2, ab + t, ab_ld * 4);
        _tile_loadd(3, b0 + t * kPanelWidth, kPanelWidth * 4);
        _tile_dpbf16ps(0, 2, 3);
        if (two) {
          _tile_loadd(4, b1 + t * kPanelWidth, kPanelWidth * 4);
          _tile_dpbf16ps(1, 2, 4);
        }
      }
      _tile_stored(0, out[0], kTileWords * 4);
      const int64_t j0 = p * kPanelWidth;
      store_block(out[0], rows, std::min(kPanelWidth, n - j0), c + i0 * ldc + j0, ldc, rs);
      if (two) {
        _tile_stored(1, out[1], kTileWords * 4);
        store_block(out[1], rows, std::min(kPanelWidth, n - j0 - kPanelWidth),
                    c + i0 * ldc + j0 + kPanelWidth, ldc, rs);
      }
    }
  }
  _tile_release();
}

#undef OSPREY_AMX

}  // namespace osprey::cpu
