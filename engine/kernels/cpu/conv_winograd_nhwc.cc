#include "kernels/cpu/conv_winograd_nhwc.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <new>

#include "base/large_pages.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::cpu {
namespace {

std::atomic<int> g_policy{static_cast<int>(TapPolicy::kAuto)};
std::atomic<int64_t> g_runs{0}, g_f4_runs{0};

#define OSPREY_WINO __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))

// The one-dimensional transforms of F(m, 3): In maps the m + 2 inputs of a window's row (or
// column) to its m + 2 positions (B^T), Out maps m + 2 products to m outputs (A^T), Weight the
// 3 taps to m + 2 positions (G). Applied along columns, then rows.
template <int m>
struct F;

template <>
struct F<2> {
  static constexpr int n = 4;
  OSPREY_WINO static void in(const __m512* d, __m512* t) {
    t[0] = d[0] - d[2];
    t[1] = d[1] + d[2];
    t[2] = d[2] - d[1];
    t[3] = d[1] - d[3];
  }
  OSPREY_WINO static void out(const __m512* a, __m512* o) {
    o[0] = a[0] + a[1] + a[2];
    o[1] = a[1] - a[2] - a[3];
  }
  static void weight(const float* g, float* u) {
    u[0] = g[0];
    u[1] = 0.5f * (g[0] + g[1] + g[2]);
    u[2] = 0.5f * (g[0] - g[1] + g[2]);
    u[3] = g[2];
  }
};

template <>
struct F<4> {
  static constexpr int n = 6;
  OSPREY_WINO static void in(const __m512* d, __m512* t) {
    const __m512 a = d[4] - 4.0f * d[2], b = d[3] - 4.0f * d[1];
    const __m512 c = d[4] - d[2], e = 2.0f * (d[3] - d[1]);
    t[0] = 4.0f * d[0] - 5.0f * d[2] + d[4];
    t[1] = a + b;
    t[2] = a - b;
    t[3] = c + e;
    t[4] = c - e;
    t[5] = 4.0f * d[1] - 5.0f * d[3] + d[5];
  }
  OSPREY_WINO static void out(const __m512* a, __m512* o) {
    const __m512 s12 = a[1] + a[2], d12 = a[1] - a[2], s34 = a[3] + a[4], d34 = a[3] - a[4];
    o[0] = a[0] + s12 + s34;
    o[1] = d12 + 2.0f * d34;
    o[2] = s12 + 4.0f * s34;
    o[3] = d12 + 8.0f * d34 + a[5];
  }
  static void weight(const float* g, float* u) {
    u[0] = g[0] / 4.0f;
    u[1] = -(g[0] + g[1] + g[2]) / 6.0f;
    u[2] = -(g[0] - g[1] + g[2]) / 6.0f;
    u[3] = g[0] / 24.0f + g[1] / 12.0f + g[2] / 6.0f;
    u[4] = g[0] / 24.0f - g[1] / 12.0f + g[2] / 6.0f;
    u[5] = g[2];
  }
};

struct Tiles {
  int64_t th = 0, tw = 0, count = 0;  // tiles down, across, in all images
};
Tiles tiles_of(const NhwcConv& p, int m) {
  Tiles t;
  t.th = (p.OH + m - 1) / m, t.tw = (p.OW + m - 1) / m;
  t.count = p.N * t.th * t.tw;
  return t;
}

// V[pos][t][C] for tiles [t_begin, t_end) of the block starting at t0 (nt tiles).
template <int m>
OSPREY_WINO void input_transform(const NhwcConv& p, const Tiles& tl, const float* x, int64_t t0,
                                 int64_t nt, int64_t t_begin, int64_t t_end, float* v) {
  constexpr int n = F<m>::n;
  const int64_t C = p.C;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t g = t0 + t, tj = g % tl.tw, ti = g / tl.tw % tl.th, img = g / (tl.tw * tl.th);
    const int64_t r0 = m * ti - p.pad_top, c0 = m * tj - p.pad_left;
    const float* rows[n];
    bool col_in[n];
    for (int i = 0; i < n; ++i) {
      const int64_t r = r0 + i;
      rows[i] = r >= 0 && r < p.H ? x + ((img * p.H + r) * p.W + c0) * C : nullptr;
      col_in[i] = c0 + i >= 0 && c0 + i < p.W;
    }
    for (int64_t c = 0; c < C; c += 16) {
      __m512 s[n][n];  // B^T d, column by column
      for (int j = 0; j < n; ++j) {
        __m512 d[n], col[n];
        for (int i = 0; i < n; ++i)
          d[i] = rows[i] && col_in[j] ? _mm512_loadu_ps(rows[i] + j * C + c) : _mm512_setzero_ps();
        F<m>::in(d, col);
        for (int i = 0; i < n; ++i) s[i][j] = col[i];
      }
      for (int i = 0; i < n; ++i) {
        __m512 out[n];
        F<m>::in(s[i], out);
        for (int j = 0; j < n; ++j) _mm512_storeu_ps(v + ((i * n + j) * nt + t) * C + c, out[j]);
      }
    }
  }
}

// Y for tiles [t_begin, t_end) of the block at t0 from mo[pos][t][M].
template <int m>
OSPREY_WINO void output_transform(const WinogradNhwcConv& cv, const Tiles& tl, const float* mo,
                                  const float* bias, int64_t t0, int64_t nt, int64_t t_begin,
                                  int64_t t_end, float* y) {
  constexpr int n = F<m>::n;
  const NhwcConv& p = cv.p;
  const int64_t M = p.M;
  const __m512 lo = _mm512_set1_ps(cv.lo), hi = _mm512_set1_ps(cv.hi);
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t g = t0 + t, tj = g % tl.tw, ti = g / tl.tw % tl.th, img = g / (tl.tw * tl.th);
    const int64_t oh = m * ti, ow = m * tj;
    const int rows = static_cast<int>(std::min<int64_t>(m, p.OH - oh));
    const int cols = static_cast<int>(std::min<int64_t>(m, p.OW - ow));
    float* out = y + ((img * p.OH + oh) * p.OW + ow) * M;
    for (int64_t c = 0; c < M; c += 16) {
      __m512 s[m][n];  // A^T a, column by column
      for (int j = 0; j < n; ++j) {
        __m512 a[n], col[m];
        for (int i = 0; i < n; ++i) a[i] = _mm512_loadu_ps(mo + ((i * n + j) * nt + t) * M + c);
        F<m>::out(a, col);
        for (int i = 0; i < m; ++i) s[i][j] = col[i];
      }
      const __m512 b = bias ? _mm512_loadu_ps(bias + c) : _mm512_setzero_ps();
      for (int i = 0; i < rows; ++i) {
        __m512 o[m];
        F<m>::out(s[i], o);
        for (int j = 0; j < cols; ++j) {
          float* to = out + (i * p.OW + j) * M + c;
          __m512 r = o[j] + b;
          if (p.has_z) r = r + _mm512_loadu_ps(to);
          if (cv.clamp) r = _mm512_min_ps(_mm512_max_ps(r, lo), hi);
          _mm512_storeu_ps(to, r);
        }
      }
    }
  }
}

// This thread's share [begin, end) of n items among `team`.
void share(int64_t n, int64_t id, int64_t team, int64_t* begin, int64_t* end) {
  *begin = n * id / team, *end = n * (id + 1) / team;
}

// One thread's part of every block (all threads step through the blocks together).
template <int m>
void run_blocks(const WinogradNhwcConv& cv, const Tiles& tl, int64_t tb, const float* x,
                const float* bias, float* y, float* v, float* mo, int64_t id, int64_t team) {
  constexpr int64_t positions = F<m>::n * F<m>::n;
  const NhwcConv& p = cv.p;
  for (int64_t t0 = 0; t0 < tl.count; t0 += tb) {
    const int64_t nt = std::min(tb, tl.count - t0);
    int64_t b, e;
    share(nt, id, team, &b, &e);
    input_transform<m>(p, tl, x, t0, nt, b, e, v);
    if (team > 1) {
#pragma omp barrier
    }
    for (int64_t q = id; q < positions; q += team)
      panel_product(cv.w->u[static_cast<size_t>(q)], v + q * nt * p.C, nt, p.C, nullptr, 0.0f,
                    mo + q * nt * p.M, 1);
    if (team > 1) {
#pragma omp barrier
    }
    output_transform<m>(cv, tl, mo, bias, t0, nt, b, e, y);
    if (team > 1) {  // the next block's input transform overwrites v
#pragma omp barrier
    }
  }
}

// U's row c (input channel c) at every position: out[q * M + o] for the (m + 2)^2 positions q
// and the M output channels o (U = G g G^T for each g = w[o, c]).
template <int m>
void transform_weights_row(const float* w, int64_t M, int64_t C, int64_t c, float* out) {
  constexpr int n = F<m>::n;
  for (int64_t o = 0; o < M; ++o) {
    const float* g = w + (o * C + c) * 9;
    float t[n][3];  // G g, column by column
    for (int j = 0; j < 3; ++j) {
      const float col[3] = {g[j], g[3 + j], g[6 + j]};
      float out_col[n];
      F<m>::weight(col, out_col);
      for (int i = 0; i < n; ++i) t[i][j] = out_col[i];
    }
    for (int i = 0; i < n; ++i) {
      float row[n];
      F<m>::weight(t[i], row);
      for (int j = 0; j < n; ++j) out[(i * n + j) * M + o] = row[j];
    }
  }
}

}  // namespace

void set_conv_winograd_nhwc_policy(TapPolicy policy) { g_policy.store(static_cast<int>(policy)); }
TapPolicy conv_winograd_nhwc_policy() { return static_cast<TapPolicy>(g_policy.load()); }
int64_t winograd_nhwc_convolutions_run() { return g_runs.load(std::memory_order_relaxed); }
int64_t winograd_nhwc_f4_convolutions_run() { return g_f4_runs.load(std::memory_order_relaxed); }

bool winograd_nhwc_fits(const NhwcConv& p) {
  const TapPolicy policy = conv_winograd_nhwc_policy();
  if (policy == TapPolicy::kNever || !panel_product_supported()) return false;
  if (policy == TapPolicy::kAuto && (p.C < kWinogradNhwcMinChannels || p.M < kWinogradNhwcMinChannels))
    return false;
  return p.block == 0 && p.KH == 3 && p.KW == 3 && p.stride_h == 1 && p.stride_w == 1 &&
         p.dil_h == 1 && p.dil_w == 1 && p.C % 16 == 0 && p.M % 16 == 0 && p.C > 0 && p.M > 0;
}

int64_t winograd_f4_max_channel_product() {
  static const int64_t limit =
      avx512_in_halves() ? kWinogradF4MaxChannelProductHalfRate : kWinogradF4MaxChannelProduct;
  return limit;
}

int winograd_nhwc_tile(const NhwcConv& p) { return p.C * p.M <= winograd_f4_max_channel_product() ? 4 : 2; }

std::shared_ptr<const WinogradNhwcWeights> pack_winograd_nhwc_weights(const float* w, int64_t M,
                                                                      int64_t C, int m) {
  // Row by row: one input channel's U at every position (a few KiB), written straight into
  // each position's panels (a whole U first, scattered C x M floats apart per write, cost
  // ResNet50's load tens of ms in cache misses).
  const int64_t positions = (m + 2) * (m + 2);
  auto out = std::make_shared<WinogradNhwcWeights>();
  out->m = m;
  const PanelB shape = panel_b_geometry(C, M);
  const size_t each = static_cast<size_t>(C * shape.padded_n);
  float* storage = static_cast<float*>(allocate_large(each * static_cast<size_t>(positions) * sizeof(float)));
  if (!storage) throw std::bad_alloc();
  std::shared_ptr<void> owner(storage, [](void* q) { free_large(q); });
  for (int64_t q = 0; q < positions; ++q) {
    PanelB pb = shape;
    pb.storage = owner;
    pb.data = storage + q * static_cast<int64_t>(each);
    out->u.push_back(pb);
  }
  std::vector<float> rows(static_cast<size_t>(positions * M));
  for (int64_t c = 0; c < C; ++c) {
    if (m == 4) {
      transform_weights_row<4>(w, M, C, c, rows.data());
    } else {
      transform_weights_row<2>(w, M, C, c, rows.data());
    }
    for (int64_t q = 0; q < positions; ++q)
      write_panel_b_row(out->u[static_cast<size_t>(q)], c, rows.data() + q * M);
  }
  return out;
}

int64_t winograd_nhwc_block_tiles(const NhwcConv& p, int m) {
  const int64_t all = tiles_of(p, m).count, positions = (m + 2) * (m + 2);
  const int64_t per_tile = positions * (p.C + p.M), u_floats = positions * p.C * p.M;
  const int64_t cap = std::max<int64_t>(1, kWinogradNhwcMaxBlockBytes / (per_tile * static_cast<int64_t>(sizeof(float))));
  const int64_t most = std::min(std::max(kWinogradNhwcMinTiles, u_floats / per_tile), cap);
  const int64_t blocks = std::max<int64_t>(1, (all + most - 1) / most);
  return (all + blocks - 1) / blocks;
}

void run_winograd_nhwc(const WinogradNhwcConv& c, const float* x, const float* bias, float* y,
                       int threads) {
  const NhwcConv& p = c.p;
  const int m = c.w->m;
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (m == 4) g_f4_runs.fetch_add(1, std::memory_order_relaxed);
  const Tiles tl = tiles_of(p, m);
  if (tl.count == 0) return;
  const int64_t tb = winograd_nhwc_block_tiles(p, m), positions = (m + 2) * (m + 2);
  float* v = conv_thread_buffer(static_cast<size_t>(positions * tb * (p.C + p.M)));
  float* mo = v + positions * tb * p.C;
  const auto run = m == 4 ? run_blocks<4> : run_blocks<2>;
  const int64_t team = omp_in_parallel() ? 1 : std::clamp<int64_t>(threads, 1, positions);
  if (team == 1) return run(c, tl, tb, x, bias, y, v, mo, 0, 1);
#pragma omp parallel num_threads(static_cast<int>(team))
  run(c, tl, tb, x, bias, y, v, mo, omp_get_thread_num(), omp_get_num_threads());
}

}  // namespace osprey::cpu
