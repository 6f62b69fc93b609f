#include "kernels/cpu/conv_winograd23.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <new>

#include "base/large_pages.h"

namespace osprey::cpu {
namespace {

std::atomic<int> g_policy{static_cast<int>(TapPolicy::kAuto)};
std::atomic<int64_t> g_runs{0};

constexpr int kPositions = 16;  // the 4x4 window

#define OSPREY_WINO __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw,fma")))

struct Tiles {
  int64_t th = 0, tw = 0, count = 0;  // tiles down, across, in all images
};
Tiles tiles_of(const NhwcConv& p) {
  Tiles t;
  t.th = (p.OH + 1) / 2, t.tw = (p.OW + 1) / 2;
  t.count = p.N * t.th * t.tw;
  return t;
}

// V[pos][t - t0][C] for tiles [t_begin, t_end) of the block starting at t0 (nt tiles).
OSPREY_WINO void input_transform(const NhwcConv& p, const Tiles& tl, const float* x, int64_t t0,
                                 int64_t nt, int64_t t_begin, int64_t t_end, float* v) {
  const int64_t C = p.C;
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t g = t0 + t, tj = g % tl.tw, ti = g / tl.tw % tl.th, n = g / (tl.tw * tl.th);
    const int64_t r0 = 2 * ti - p.pad_top, c0 = 2 * tj - p.pad_left;
    const float* rows[4];
    bool col_in[4];
    for (int i = 0; i < 4; ++i) {
      const int64_t r = r0 + i;
      rows[i] = r >= 0 && r < p.H ? x + ((n * p.H + r) * p.W + c0) * C : nullptr;
      col_in[i] = c0 + i >= 0 && c0 + i < p.W;
    }
    for (int64_t c = 0; c < C; c += 16) {
      __m512 d[4][4];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j)
          d[i][j] = rows[i] && col_in[j] ? _mm512_loadu_ps(rows[i] + j * C + c) : _mm512_setzero_ps();
      // B^T d: rows d0 - d2, d1 + d2, d2 - d1, d1 - d3; then the same on the columns.
      __m512 s[4][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = _mm512_sub_ps(d[0][j], d[2][j]);
        s[1][j] = _mm512_add_ps(d[1][j], d[2][j]);
        s[2][j] = _mm512_sub_ps(d[2][j], d[1][j]);
        s[3][j] = _mm512_sub_ps(d[1][j], d[3][j]);
      }
      for (int i = 0; i < 4; ++i) {
        const __m512 out[4] = {_mm512_sub_ps(s[i][0], s[i][2]), _mm512_add_ps(s[i][1], s[i][2]),
                               _mm512_sub_ps(s[i][2], s[i][1]), _mm512_sub_ps(s[i][1], s[i][3])};
        for (int j = 0; j < 4; ++j) _mm512_storeu_ps(v + ((i * 4 + j) * nt + t) * C + c, out[j]);
      }
    }
  }
}

// Y for tiles [t_begin, t_end) of the block at t0 from m[pos][t - t0][M].
OSPREY_WINO void output_transform(const Winograd23Conv& cv, const Tiles& tl, const float* m,
                                  const float* bias, int64_t t0, int64_t nt, int64_t t_begin,
                                  int64_t t_end, float* y) {
  const NhwcConv& p = cv.p;
  const int64_t M = p.M;
  const __m512 lo = _mm512_set1_ps(cv.lo), hi = _mm512_set1_ps(cv.hi);
  for (int64_t t = t_begin; t < t_end; ++t) {
    const int64_t g = t0 + t, tj = g % tl.tw, ti = g / tl.tw % tl.th, n = g / (tl.tw * tl.th);
    const int64_t oh = 2 * ti, ow = 2 * tj;
    const int rows = oh + 1 < p.OH ? 2 : 1, cols = ow + 1 < p.OW ? 2 : 1;
    float* out = y + ((n * p.OH + oh) * p.OW + ow) * M;
    for (int64_t c = 0; c < M; c += 16) {
      __m512 a[4][4];
      for (int q = 0; q < kPositions; ++q) a[q / 4][q % 4] = _mm512_loadu_ps(m + (q * nt + t) * M + c);
      // A^T a: rows a0 + a1 + a2 and a1 - a2 - a3; then the same on the columns.
      __m512 s[2][4];
      for (int j = 0; j < 4; ++j) {
        s[0][j] = _mm512_add_ps(_mm512_add_ps(a[0][j], a[1][j]), a[2][j]);
        s[1][j] = _mm512_sub_ps(_mm512_sub_ps(a[1][j], a[2][j]), a[3][j]);
      }
      const __m512 b = bias ? _mm512_loadu_ps(bias + c) : _mm512_setzero_ps();
      for (int i = 0; i < rows; ++i) {
        __m512 o[2] = {_mm512_add_ps(_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]), b),
                       _mm512_add_ps(_mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3]), b)};
        for (int j = 0; j < cols; ++j) {
          float* to = out + (i * p.OW + j) * M + c;
          if (p.has_z) o[j] = _mm512_add_ps(o[j], _mm512_loadu_ps(to));
          if (cv.clamp) o[j] = _mm512_min_ps(_mm512_max_ps(o[j], lo), hi);
          _mm512_storeu_ps(to, o[j]);
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
void run_blocks(const Winograd23Conv& cv, const Tiles& tl, int64_t tb, const float* x,
                const float* bias, float* y, float* v, float* m, int64_t id, int64_t team) {
  const NhwcConv& p = cv.p;
  for (int64_t t0 = 0; t0 < tl.count; t0 += tb) {
    const int64_t nt = std::min(tb, tl.count - t0);
    int64_t b, e;
    share(nt, id, team, &b, &e);
    input_transform(p, tl, x, t0, nt, b, e, v);
    if (team > 1) {
#pragma omp barrier
    }
    for (int64_t q = id; q < kPositions; q += team)
      panel_product(cv.w->u[static_cast<size_t>(q)], v + q * nt * p.C, nt, p.C, nullptr, 0.0f,
                    m + q * nt * p.M, 1);
    if (team > 1) {
#pragma omp barrier
    }
    output_transform(cv, tl, m, bias, t0, nt, b, e, y);
    if (team > 1) {  // the next block's input transform overwrites v
#pragma omp barrier
    }
  }
}

}  // namespace

void set_conv_winograd23_policy(TapPolicy policy) { g_policy.store(static_cast<int>(policy)); }
TapPolicy conv_winograd23_policy() { return static_cast<TapPolicy>(g_policy.load()); }
int64_t winograd23_convolutions_run() { return g_runs.load(std::memory_order_relaxed); }

bool winograd23_fits(const NhwcConv& p) {
  const TapPolicy policy = conv_winograd23_policy();
  if (policy == TapPolicy::kNever || !panel_product_supported()) return false;
  if (policy == TapPolicy::kAuto && (p.C < kWinograd23MinChannels || p.M < kWinograd23MinChannels))
    return false;
  return p.block == 0 && p.KH == 3 && p.KW == 3 && p.stride_h == 1 && p.stride_w == 1 &&
         p.dil_h == 1 && p.dil_w == 1 && p.C % 16 == 0 && p.M % 16 == 0 && p.C > 0 && p.M > 0;
}

std::shared_ptr<const Winograd23Weights> pack_winograd23_weights(const float* w, int64_t M, int64_t C) {
  // U[pos][c][m] = (G g G^T)[pos] for g = W[m, c] (3x3), G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1].
  std::vector<float> u(static_cast<size_t>(kPositions * C * M));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t c = 0; c < C; ++c) {
      const float* g = w + (m * C + c) * 9;
      float t[4][3];
      for (int j = 0; j < 3; ++j) {
        t[0][j] = g[j];
        t[1][j] = 0.5f * (g[j] + g[3 + j] + g[6 + j]);
        t[2][j] = 0.5f * (g[j] - g[3 + j] + g[6 + j]);
        t[3][j] = g[6 + j];
      }
      for (int i = 0; i < 4; ++i) {
        const float row[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]),
                              0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
        for (int j = 0; j < 4; ++j) u[static_cast<size_t>(((i * 4 + j) * C + c) * M + m)] = row[j];
      }
    }
  auto out = std::make_shared<Winograd23Weights>();
  const PanelB shape = panel_b_geometry(C, M);
  const size_t each = static_cast<size_t>(C * shape.padded_n);
  float* storage = static_cast<float*>(allocate_large(each * kPositions * sizeof(float)));
  if (!storage) throw std::bad_alloc();
  std::shared_ptr<void> owner(storage, [](void* q) { free_large(q); });
  for (int q = 0; q < kPositions; ++q) {
    PanelB pb = shape;
    pb.storage = owner;
    pb.data = storage + q * each;
    const float* uq = u.data() + static_cast<size_t>(q * C * M);
    fill_panel_b(pb, [&](int64_t k, int64_t n0, int64_t width, float* to) {
      std::memcpy(to, uq + k * M + n0, static_cast<size_t>(width) * sizeof(float));
    });
    out->u.push_back(pb);
  }
  return out;
}

int64_t winograd23_block_tiles(const NhwcConv& p) {
  const int64_t all = tiles_of(p).count;
  const int64_t per_tile = kPositions * (p.C + p.M), u_floats = kPositions * p.C * p.M;
  const int64_t most = std::max(kWinograd23MinTiles, u_floats / per_tile);
  const int64_t blocks = std::max<int64_t>(1, (all + most - 1) / most);
  return (all + blocks - 1) / blocks;
}

void run_winograd23(const Winograd23Conv& c, const float* x, const float* bias, float* y, int threads) {
  const NhwcConv& p = c.p;
  g_runs.fetch_add(1, std::memory_order_relaxed);
  const Tiles tl = tiles_of(p);
  if (tl.count == 0) return;
  const int64_t tb = winograd23_block_tiles(p);
  float* v = conv_thread_buffer(static_cast<size_t>(kPositions * tb * (p.C + p.M)));
  float* m = v + kPositions * tb * p.C;
  const int64_t team = omp_in_parallel() ? 1 : std::clamp<int64_t>(threads, 1, kPositions);
  if (team == 1) return run_blocks(c, tl, tb, x, bias, y, v, m, 0, 1);
#pragma omp parallel num_threads(static_cast<int>(team))
  run_blocks(c, tl, tb, x, bias, y, v, m, omp_get_thread_num(), omp_get_num_threads());
}

}  // namespace osprey::cpu
