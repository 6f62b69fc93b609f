// The tile form's packing, padding and threading; the tiles themselves are in
// conv_tiles_impl.inc, compiled once per ISA. Built with -ffp-contract=fast: the sums are the
// reference's up to the rounding of a reordered dot product.
#include "kernels/cpu/conv_tiles.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "kernels/cpu/kept_buffer.h"

namespace osprey::cpu {
namespace {

#define OSPREY_TILE_IMPL "kernels/cpu/conv_tiles_impl.inc"
#include "kernels/cpu/tile_regions.inc"
#undef OSPREY_TILE_IMPL

std::atomic<int> g_policy{static_cast<int>(TapPolicy::kAuto)};
std::atomic<int64_t> g_runs{0};

// Output rows [row_begin, row_end) of the N * OH rows, xp being the (padded) input.
void conv_tile_rows(VectorIsa isa, const TileConv& t, const float* xp, const float* bias,
                    float* y, int64_t row_begin, int64_t row_end) {
  switch (isa) {
    case VectorIsa::avx512: return tiles_avx512::conv_rows(t, xp, bias, y, row_begin, row_end);
    case VectorIsa::avx2: return tiles_avx2::conv_rows(t, xp, bias, y, row_begin, row_end);
    case VectorIsa::generic: return tiles_generic::conv_rows(t, xp, bias, y, row_begin, row_end);
  }
}

// Padded inputs up to this size stay with their thread between runs.
constexpr size_t kKeptPaddedBytes = size_t{16} << 20;

// Rows [begin, end) of the N * Hp rows of the bordered copy of x.
void pad_rows(const TileConv& t, const float* x, float* xp, int64_t begin, int64_t end) {
  const NhwcConv& p = t.p;
  const int64_t C = p.C, row = t.Wp * C;
  for (int64_t r = begin; r < end; ++r) {
    const int64_t n = r / t.Hp, h = r % t.Hp - p.pad_top;
    float* dst = xp + r * row;
    if (h < 0 || h >= p.H) {
      std::memset(dst, 0, static_cast<size_t>(row) * sizeof(float));
      continue;
    }
    const int64_t left = p.pad_left * C, body = p.W * C;
    std::memset(dst, 0, static_cast<size_t>(left) * sizeof(float));
    std::memcpy(dst + left, x + (n * p.H + h) * body, static_cast<size_t>(body) * sizeof(float));
    std::memset(dst + left + body, 0, static_cast<size_t>(row - left - body) * sizeof(float));
  }
}

}  // namespace

bool tile_activation(const std::string& name, const std::vector<float>& params, TileAct* act,
                     float* lo, float* hi) {
  if (name.empty()) {
    *act = TileAct::kNone;
  } else if (name == "Relu") {
    *act = TileAct::kRelu;
  } else if (name == "Clip" && params.size() == 2) {
    *act = TileAct::kClip;
    *lo = params[0];
    *hi = params[1];
  } else {
    return false;
  }
  return true;
}

int64_t conv_panel_floats(int64_t M, int64_t C, int64_t KH, int64_t KW) {
  return (M + 15) / 16 * KH * KW * C * 16;
}

void pack_conv_panels(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW, float* dst) {
  const int64_t blocks = (M + 15) / 16;
  for (int64_t mb = 0; mb < blocks; ++mb)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t c = 0; c < C; ++c) {
          float* out = dst + (((mb * KH + kh) * KW + kw) * C + c) * 16;
          for (int64_t j = 0; j < 16; ++j) {
            const int64_t m = mb * 16 + j;
            out[j] = m < M ? w[((m * C + c) * KH + kh) * KW + kw] : 0.0f;
          }
        }
}

bool tiles_pay(const NhwcConv& p, const char* direct_impl) {
  if (conv_tap_policy() == TapPolicy::kAlways) return false;
  switch (conv_tile_policy()) {
    case TapPolicy::kNever: return false;
    case TapPolicy::kAlways: return true;
    case TapPolicy::kAuto: break;
  }
  return best_vector_isa() != VectorIsa::generic && std::strcmp(direct_impl, "jit:avx2") == 0 &&
         p.KH * p.KW > 1 && p.C >= 16 && p.C < 128;
}

TileConv make_tile_conv(const NhwcConv& p, TileAct act, float lo, float hi,
                        std::shared_ptr<const std::vector<float>> panels) {
  TileConv t;
  t.p = p;
  t.act = act;
  t.lo = lo;
  t.hi = hi;
  t.panels = std::move(panels);
  // The extent every tap of every output pixel reaches, from the (padded) top left corner.
  const int64_t need_h = (p.OH - 1) * p.stride_h + (p.KH - 1) * p.dil_h + 1;
  const int64_t need_w = (p.OW - 1) * p.stride_w + (p.KW - 1) * p.dil_w + 1;
  t.Hp = std::max(need_h, p.pad_top + p.H);
  t.Wp = std::max(need_w, p.pad_left + p.W);
  t.padded = p.pad_top != 0 || p.pad_left != 0 || t.Hp != p.H || t.Wp != p.W;
  return t;
}

void set_conv_tile_policy(TapPolicy policy) {
  g_policy.store(static_cast<int>(policy));
}
TapPolicy conv_tile_policy() {
  return static_cast<TapPolicy>(g_policy.load());
}
int64_t tile_convolutions_run() {
  return g_runs.load(std::memory_order_relaxed);
}

Status run_tile_conv(VectorIsa isa, const TileConv& t, const float* x, const float* bias,
                     float* y, ThreadPool* pool, int64_t max_elements) {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  const NhwcConv& p = t.p;
  thread_local KeptBuffer buffer(kKeptPaddedBytes);
  const float* xp = x;
  if (t.padded) {
    const int64_t floats = p.N * t.Hp * t.Wp * p.C;
    if (floats > max_elements)
      return resource_exhausted("convolution: the padded input needs ", floats,
                                " floats, over the limit of ", max_elements);
    float* dst = buffer.get(static_cast<size_t>(floats));
    auto pad = [&](int64_t b, int64_t e) { pad_rows(t, x, dst, b, e); };
    if (pool)
      pool->parallel_for(p.N * t.Hp, t.Wp * p.C, pad);
    else
      pad(0, p.N * t.Hp);
    xp = dst;
  }
  auto rows = [&](int64_t b, int64_t e) { conv_tile_rows(isa, t, xp, bias, y, b, e); };
  const int64_t per_row = p.OW * p.M * p.C * p.KH * p.KW;
  if (pool)
    pool->parallel_for(p.N * p.OH, per_row, rows);
  else
    rows(0, p.N * p.OH);
  buffer.trim();
  return Status::Ok();
}

}  // namespace osprey::cpu
