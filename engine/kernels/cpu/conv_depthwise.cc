#include "kernels/cpu/conv_depthwise.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/cpu/attention_bf16.h"

namespace osprey::cpu {
namespace {

std::atomic<int64_t> g_runs{0};
std::atomic<TapPolicy> g_policy{TapPolicy::kAuto};

// Every function that touches 512-bit vectors carries the target.
#define OSPREY_DW __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma")))
#define OSPREY_DW_INLINE OSPREY_DW inline __attribute__((always_inline))

OSPREY_DW_INLINE __mmask16 lanes(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

// 16 channels of one pixel (the first `m` lanes; 0 elsewhere) as floats.
OSPREY_DW_INLINE __m512 load_px(const float* p, __mmask16 m) {
  return _mm512_maskz_loadu_ps(m, p);
}
OSPREY_DW_INLINE __m512 load_px(const uint16_t* p, __mmask16 m) {
  const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
}

struct Row {  // what one output row's tiles share
  const DwConv* d;
  const float* weights;  // packed, [KH * KW][Cp]
  int64_t Cp;
  const float* bias;
  __mmask16 mask;  // the channel block's lanes
  int64_t c;       // the block's first channel
};

// Output pixels [ow0, ow0 + nt) of output rows oh .. oh + R - 1 of image x (its first pixel;
// Y's rows `y_row` apart, the first at y_row), channels [c, c + 16) of `r`. With R = 2 each
// input row is widened once for both output rows that read it. kChecked: input columns outside
// [0, W) read as zero and only nt <= kDwTile pixels are stored; otherwise every tap is inside
// and nt == kDwTile.
template <int KW, int SW, int R, bool kChecked, class X>
OSPREY_DW_INLINE void tile(const Row& r, const X* x, void* y_row, int64_t y_row_bytes, int64_t oh,
                           int64_t ow0, int nt) {
  constexpr int T = kDwTile;
  constexpr int kIn = (T - 1) * SW + KW;
  const DwConv& d = *r.d;
  __m512 acc[R][T];
  const __m512 b = r.bias ? _mm512_maskz_loadu_ps(r.mask, r.bias + r.c) : _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int o = 0; o < R; ++o)
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) acc[o][t] = b;
  const int64_t iw0 = ow0 * SW - d.PW;
  const int64_t ih0 = oh * d.SH - d.PH;
  // Input rows ih0 + q, q < (R - 1) * SH + KH; row q is kernel row q - o * SH of output row o.
  const int64_t q_lo = std::max<int64_t>(0, -ih0);
  const int64_t q_hi = std::min<int64_t>((R - 1) * d.SH + d.KH, d.H - ih0);
  for (int64_t q = q_lo; q < q_hi; ++q) {
    const X* row = x + ((ih0 + q) * d.W + iw0) * d.C + r.c;
    __m512 in[kIn];
#pragma GCC unroll 32
    for (int j = 0; j < kIn; ++j) {
      if (kChecked && (iw0 + j < 0 || iw0 + j >= d.W)) in[j] = _mm512_setzero_ps();
      else in[j] = load_px(row + j * d.C, r.mask);
    }
#pragma GCC unroll 2
    for (int o = 0; o < R; ++o) {
      const int64_t kh = q - o * d.SH;
      if (kh < 0 || kh >= d.KH) continue;
      const float* w = r.weights + kh * KW * r.Cp + r.c;
#pragma GCC unroll 8
      for (int kw = 0; kw < KW; ++kw) {
        const __m512 wv = _mm512_loadu_ps(w + kw * r.Cp);
#pragma GCC unroll 8
        for (int t = 0; t < T; ++t) acc[o][t] = _mm512_fmadd_ps(wv, in[t * SW + kw], acc[o][t]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(d.lo), hi = _mm512_set1_ps(d.hi), zero = _mm512_setzero_ps();
#pragma GCC unroll 2
  for (int o = 0; o < R; ++o) {
    char* yo = static_cast<char*>(y_row) + o * y_row_bytes;
#pragma GCC unroll 8
    for (int t = 0; t < T; ++t) {
      if (kChecked && t >= nt) break;
      __m512 v = acc[o][t];
      if (d.act == TileAct::kRelu) v = _mm512_max_ps(v, zero);
      else if (d.act == TileAct::kClip) v = _mm512_min_ps(_mm512_max_ps(v, lo), hi);
      const int64_t at = (ow0 + t) * d.C + r.c;
      if (d.y_bf16)
        _mm256_mask_storeu_epi16(reinterpret_cast<uint16_t*>(yo) + at, r.mask,
                                 (__m256i)_mm512_cvtneps_pbh(v));
      else
        _mm512_mask_storeu_ps(reinterpret_cast<float*>(yo) + at, r.mask, v);
    }
  }
}

// One channel block of R output rows from oh: the first tile takes the left pad's columns and
// as many after them as it holds (a narrow image, 14 or 7 columns, does not spend a whole tile
// on one column), whole tiles follow while every tap is inside, checked tiles end the row.
template <int KW, int SW, int R, class X>
OSPREY_DW_INLINE void block_rows(const Row& r, const X* xn, void* y_row, int64_t y_row_bytes,
                                 int64_t oh, int64_t first, int64_t last) {
  constexpr int T = kDwTile;
  const int64_t OW = r.d->OW;
  int64_t ow = 0;
  if (first > 0) {
    const int nt = static_cast<int>(std::min<int64_t>(T, OW));
    tile<KW, SW, R, true>(r, xn, y_row, y_row_bytes, oh, 0, nt);
    ow = nt;
  }
  for (; ow + T <= last; ow += T) tile<KW, SW, R, false>(r, xn, y_row, y_row_bytes, oh, ow, T);
  while (ow < OW) {
    const int nt = static_cast<int>(std::min<int64_t>(T, OW - ow));
    tile<KW, SW, R, true>(r, xn, y_row, y_row_bytes, oh, ow, nt);
    ow += nt;
  }
}

// Channels per work item: output rows are split across threads together with groups of
// channels, so that a 7- or 14-row layer still balances over two threads.
constexpr int64_t kChannelGroup = 64;

// Work items [begin, end) of the N * ceil(OH / 2) * ceil(C / kChannelGroup) (pair of output
// rows, channel group) items. At stride 1 a pair runs as two-row tiles; at stride 2 (whose
// wider input rows leave no registers for a second row's sums) row by row.
template <int KW, int SW, class X>
OSPREY_DW void rows(const DwConv& d, const X* x, const float* bias, void* y, int64_t begin, int64_t end) {
  const int64_t Cp = (d.C + 15) / 16 * 16;
  const int64_t groups = (d.C + kChannelGroup - 1) / kChannelGroup;
  const int64_t pairs = (d.OH + 1) / 2;
  // Output columns whose taps are all inside the input: [first, last) (or none).
  const int64_t first = std::min(d.OW, (d.PW + SW - 1) / SW);
  const int64_t span = d.W - KW + d.PW;  // the last column's first tap, when >= 0
  const int64_t last = span < 0 ? first : std::max(first, std::min(d.OW, span / SW + 1));
  const int64_t row_bytes = d.OW * d.C * (d.y_bf16 ? 2 : 4);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t pair = item / groups, g = item % groups;
    const int64_t n = pair / pairs, oh = pair % pairs * 2;
    const bool two = oh + 1 < d.OH;
    const X* xn = x + n * d.H * d.W * d.C;
    char* y_row = static_cast<char*>(y) + (n * d.OH + oh) * row_bytes;
    for (int64_t c = g * kChannelGroup; c < std::min(d.C, (g + 1) * kChannelGroup); c += 16) {
      const Row r{&d, d.weights->data(), Cp, bias, lanes(d.C - c), c};
      if constexpr (SW == 1) {
        if (two) {
          block_rows<KW, SW, 2>(r, xn, y_row, row_bytes, oh, first, last);
          continue;
        }
      }
      block_rows<KW, SW, 1>(r, xn, y_row, row_bytes, oh, first, last);
      if (two) block_rows<KW, SW, 1>(r, xn, y_row + row_bytes, row_bytes, oh + 1, first, last);
    }
  }
}

template <int KW, int SW>
void run_rows(const DwConv& d, const void* x, const float* bias, void* y, int64_t begin, int64_t end) {
  if (d.x_bf16) rows<KW, SW>(d, static_cast<const uint16_t*>(x), bias, y, begin, end);
  else rows<KW, SW>(d, static_cast<const float*>(x), bias, y, begin, end);
}

using RowsFn = void (*)(const DwConv&, const void*, const float*, void*, int64_t, int64_t);

RowsFn rows_fn(int64_t KW, int64_t SW) {
  switch (KW * 10 + SW) {
    case 31: return run_rows<3, 1>;
    case 32: return run_rows<3, 2>;
    case 51: return run_rows<5, 1>;
    case 52: return run_rows<5, 2>;
    case 71: return run_rows<7, 1>;
    case 72: return run_rows<7, 2>;
  }
  return nullptr;
}

}  // namespace

bool depthwise_fma_pays() {
  static const bool pays = attention_bf16_available();
  return pays;
}

void set_depthwise_policy(TapPolicy policy) {
  g_policy.store(policy, std::memory_order_relaxed);
}

TapPolicy depthwise_policy() {
  return g_policy.load(std::memory_order_relaxed);
}

bool depthwise_wanted() {
  switch (depthwise_policy()) {
    case TapPolicy::kNever: return false;
    case TapPolicy::kAlways: return attention_bf16_available();
    case TapPolicy::kAuto: break;
  }
  return depthwise_fma_pays();
}

bool depthwise_fits(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t PH, int64_t PW) {
  return KH >= 1 && KH <= 7 && rows_fn(KW, SW) != nullptr && (SH == 1 || SH == 2) && PH >= 0 &&
         PH < KH && PW >= 0 && PW < KW;  // rows_fn: a kernel for KW and SW
}

std::vector<float> pack_depthwise_weights(const float* w, int64_t C, int64_t KH, int64_t KW) {
  const int64_t Cp = (C + 15) / 16 * 16;
  std::vector<float> out(static_cast<size_t>(KH * KW * Cp), 0.0f);
  for (int64_t c = 0; c < C; ++c)
    for (int64_t k = 0; k < KH * KW; ++k) out[static_cast<size_t>(k * Cp + c)] = w[c * KH * KW + k];
  return out;
}

void run_depthwise(const DwConv& d, const void* x, const float* bias, void* y, ThreadPool* pool) {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  const RowsFn fn = rows_fn(d.KW, d.SW);
  const int64_t items = d.N * ((d.OH + 1) / 2) * ((d.C + kChannelGroup - 1) / kChannelGroup);
  const int64_t threads = pool ? pool->num_threads() : 1;
  if (threads <= 1) return fn(d, x, bias, y, 0, items);
  // One contiguous range of items (row pairs, then channel groups) per thread, in order: thread t
  // writes (and reads) the t-th part of the image, as oneDNN's convolutions around the layer
  // split theirs, so that activations stay in the core's cache from one layer to the next.
  // (Chunks claimed in turn, as parallel_for's default, made MobileNetV2 8% slower on two
  // threads than oneDNN's depthwise kernel, though each depthwise layer was as fast.)
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) fn(d, x, bias, y, t * items / threads, (t + 1) * items / threads);
  };
  const int64_t per_thread = items * 2 * d.OW * std::min(d.C, kChannelGroup) * d.KH * d.KW / threads;
  pool->parallel_for(threads, std::max<int64_t>(per_thread, ThreadPool::kMinCostPerChunk), body);
}

int64_t depthwise_convolutions_run() {
  return g_runs.load(std::memory_order_relaxed);
}

}  // namespace osprey::cpu
