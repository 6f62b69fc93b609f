// The tap form of a channels-last convolution: see conv_taps.h.
#include "kernels/cpu/conv_taps.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace osprey::cpu {
namespace {

using dnnl::memory;

std::atomic<int> g_policy{static_cast<int>(TapPolicy::kAuto)};
std::atomic<int64_t> g_runs{0};

enum Role { kFirst = 0, kMiddle = 1, kLast = 2 };

Role role_of(int64_t r, int64_t rows) {
  return r == 0 ? kFirst : (r == rows - 1 ? kLast : kMiddle);
}

memory::format_tag layout_tag(const NhwcConv& p) {
  if (p.block == 0) return memory::format_tag::nhwc;
  return p.block == 8 ? memory::format_tag::nChw8c : memory::format_tag::nChw16c;
}

// One 1x1 convolution over `pixels` pixels of KW * C channels into M channels.
TapConv::Step make_step(const NhwcConv& p, const Activation& act, int64_t pixels, Role role) {
  const int64_t K = p.KW * p.C;
  TapConv::Step s;
  s.src_md = memory::desc({1, K, 1, pixels}, memory::data_type::f32, layout_tag(p));
  s.dst_md = memory::desc({1, p.M, 1, pixels}, memory::data_type::f32, layout_tag(p));
  const memory::desc w_any({p.M, K, 1, 1}, memory::data_type::f32, memory::format_tag::any);
  const bool first = role == kFirst, last = role == kLast || p.KH == 1;
  dnnl::post_ops ops;
  if (!first || p.has_z) ops.append_sum(1.0f);
  if (last) append_activation(act, &ops);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  const memory::dims one = {1, 1}, zero = {0, 0};
  auto desc =
      first && p.has_bias
          ? dnnl::convolution_forward::desc(prop, alg, s.src_md, w_any, plain_desc({p.M}), s.dst_md,
                                            one, zero, zero)
          : dnnl::convolution_forward::desc(prop, alg, s.src_md, w_any, s.dst_md, one, zero, zero);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine());
  s.prim = dnnl::convolution_forward(pd);
  s.w_md = pd.weights_desc();
  s.scratch_md = pd.scratchpad_desc();
  return s;
}

// Calls f(index in W [M, C, KH, KW], index in row r's [M, KW * C]) for every element of row r.
template <class F>
void for_each_row_element(int64_t M, int64_t C, int64_t KH, int64_t KW, int64_t r, F f) {
  for (int64_t m = 0; m < M; ++m)
    for (int64_t kx = 0; kx < KW; ++kx)
      for (int64_t c = 0; c < C; ++c)
        f(static_cast<size_t>(((m * C + c) * KH + r) * KW + kx),
          static_cast<size_t>((m * KW + kx) * C + c));
}

// Row r of W [M, C, KH, KW] as a plain [M, KW * C] matrix: element (m, kx * C + c).
std::vector<float> row_weights(const NhwcConv& p, const float* w, int64_t r) {
  std::vector<float> out(static_cast<size_t>(p.M * p.KW * p.C));
  for_each_row_element(p.M, p.C, p.KH, p.KW, r, [&](size_t wi, size_t ri) { out[ri] = w[wi]; });
  return out;
}

// The row weights in layout `md`: from W when given, else reordered from a packed form.
std::shared_ptr<const TapRows> pack_rows(
    const NhwcConv& p, const memory::desc& md, const float* w,
    const std::vector<std::shared_ptr<const TapRows>>& packed) {
  auto rows = std::make_shared<TapRows>();
  rows->md = md;
  const memory::desc plain = plain_desc({p.M, p.KW * p.C, 1, 1});
  for (int64_t r = 0; r < p.KH; ++r) {
    memory to(md, dnnl_engine());
    if (w) {
      std::vector<float> rw = row_weights(p, w, r);
      run_reorder(make_reorder(plain, md), wrap(plain, rw.data()), to);
    } else {
      const TapRows& from = *packed.front();
      run_reorder(make_reorder(from.md, md), from.rows[static_cast<size_t>(r)], to);
    }
    rows->rows.push_back(to);
  }
  return rows;
}


// Copies the pixels under kernel row r's taps for output pixels [q0, q0 + n) into buf
// ([n, KW * C]); taps that fall in the padding are zeros.
void fill_row(const NhwcConv& p, const float* x, int64_t r, int64_t q0, int64_t n, float* buf) {
  const int64_t C = p.C, KC = p.KW * p.C, plane = p.OH * p.OW;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t q = q0 + i, img = q / plane, oy = (q % plane) / p.OW, ox = q % p.OW;
    float* o = buf + i * KC;
    const int64_t iy = oy * p.stride_h - p.pad_top + r * p.dil_h;
    if (iy < 0 || iy >= p.H) {
      std::memset(o, 0, sizeof(float) * static_cast<size_t>(KC));
      continue;
    }
    const float* in_row = x + (img * p.H + iy) * p.W * C;
    const int64_t ix0 = ox * p.stride_w - p.pad_left;
    if (p.dil_w == 1 && ix0 >= 0 && ix0 + p.KW <= p.W) {
      std::memcpy(o, in_row + ix0 * C, sizeof(float) * static_cast<size_t>(KC));
      continue;
    }
    for (int64_t kx = 0; kx < p.KW; ++kx, o += C) {
      const int64_t ix = ix0 + kx * p.dil_w;
      if (ix < 0 || ix >= p.W)
        std::memset(o, 0, sizeof(float) * static_cast<size_t>(C));
      else
        std::memcpy(o, in_row + ix * C, sizeof(float) * static_cast<size_t>(C));
    }
  }
}

// The output columns [lo, hi) whose input column ox * stride + off lies in [0, W).
void valid_columns(int64_t OW, int64_t W, int64_t stride, int64_t off, int64_t* lo, int64_t* hi) {
  // Smallest ox with ox * stride + off >= 0; largest with ox * stride + off <= W - 1.
  *lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  *hi = W - 1 - off < 0 ? 0 : (W - 1 - off) / stride + 1;
  *lo = std::min(*lo, OW);
  *hi = std::clamp(*hi, *lo, OW);
}

// The blocked layout's copy for image `img`: planes [pl0, pl1) of buf, which is
// [KW * C / B, OH * OW, B] (plane kx * C / B + cb holds tap kx of channel block cb under kernel
// row r). Each plane is filled output row by output row: zeros where the taps fall in the
// padding, and between them one copy per row (stride 1) or B floats per pixel.
template <int64_t B>
void fill_planes_blocked(const NhwcConv& p, const float* x, int64_t r, int64_t img, int64_t pl0,
                         int64_t pl1, float* buf) {
  const int64_t CB = p.C / B, plane = p.OH * p.OW;
  for (int64_t pl = pl0; pl < pl1; ++pl) {
    const int64_t kx = pl / CB, cb = pl % CB;
    const float* in_plane = x + (img * CB + cb) * p.H * p.W * B;
    float* out = buf + pl * plane * B;
    const int64_t off = kx * p.dil_w - p.pad_left;
    int64_t lo = 0, hi = 0;
    valid_columns(p.OW, p.W, p.stride_w, off, &lo, &hi);
    for (int64_t oy = 0; oy < p.OH; ++oy) {
      float* o = out + oy * p.OW * B;
      const int64_t iy = oy * p.stride_h - p.pad_top + r * p.dil_h;
      if (iy < 0 || iy >= p.H) {
        std::memset(o, 0, sizeof(float) * static_cast<size_t>(p.OW * B));
        continue;
      }
      std::memset(o, 0, sizeof(float) * static_cast<size_t>(lo * B));
      std::memset(o + hi * B, 0, sizeof(float) * static_cast<size_t>((p.OW - hi) * B));
      const float* in_row = in_plane + iy * p.W * B;
      if (p.stride_w == 1) {
        std::memcpy(o + lo * B, in_row + (lo + off) * B, sizeof(float) * static_cast<size_t>((hi - lo) * B));
      } else {
        for (int64_t ox = lo; ox < hi; ++ox)
          std::memcpy(o + ox * B, in_row + (ox * p.stride_w + off) * B, sizeof(float) * B);
      }
    }
  }
}

}  // namespace

void set_conv_tap_policy(TapPolicy policy) {
  g_policy.store(static_cast<int>(policy));
}
TapPolicy conv_tap_policy() {
  return static_cast<TapPolicy>(g_policy.load());
}
int64_t tap_convolutions_run() {
  return g_runs.load(std::memory_order_relaxed);
}

bool taps_fit(const NhwcConv& p) {
  if (p.block == 0) return true;
  return p.C % p.block == 0 && p.M % p.block == 0 &&
         p.OH * p.OW * p.KW * p.C <= static_cast<int64_t>(kTapBlockBytes / sizeof(float));
}

bool taps_pay(const NhwcConv& p, const char* direct_impl) {
  if (!taps_fit(p)) return false;
  switch (conv_tap_policy()) {
    case TapPolicy::kNever: return false;
    case TapPolicy::kAlways: return true;
    case TapPolicy::kAuto: break;
  }
  return std::strcmp(direct_impl, "jit:avx2") == 0 &&
         p.C >= (p.block ? kBlockedTapMinChannels : 64);
}

Result<std::shared_ptr<const TapConv>> build_taps(
    const NhwcConv& p, const Activation& act, const float* w,
    std::vector<std::shared_ptr<const TapRows>>* packed) {
  auto t = std::make_shared<TapConv>();
  t->p = p;
  const int64_t pixels = p.N * p.OH * p.OW;
  const int64_t row_bytes = p.KW * p.C * static_cast<int64_t>(sizeof(float));
  if (!taps_fit(p)) return internal_error("tap convolution: a blocked image does not fit a block");
  t->block = p.block ? p.OH * p.OW
                     : std::clamp<int64_t>(static_cast<int64_t>(kTapBlockBytes) / row_bytes, 1, pixels);
  t->tail = pixels % t->block;
  if (p.has_bias) t->bias_md = plain_desc({p.M});
  memory::desc md;
  for (int size = 0; size < (t->tail ? 2 : 1); ++size)
    for (int role = 0; role < 3; ++role) {
      const bool present =
          role == kFirst || (role == kLast && p.KH > 1) || (role == kMiddle && p.KH > 2);
      if (!present) continue;
      auto& s = t->steps[size][role];
      s = make_step(p, act, size ? t->tail : t->block, static_cast<Role>(role));
      if (md.is_zero()) md = s.w_md;
      if (s.w_md != md)
        return internal_error("tap convolution: its 1x1 primitives chose different weight layouts");
    }
  for (const auto& rows : *packed)
    if (rows->md == md) t->rows = rows;
  if (!t->rows) {
    if (!w && packed->empty()) return internal_error("tap convolution: no weights to pack");
    t->rows = pack_rows(p, md, w, *packed);
    packed->push_back(t->rows);
  }
  return std::shared_ptr<const TapConv>(t);
}

std::vector<float> unpack_tap_rows(const TapRows& rows, int64_t M, int64_t C, int64_t KH,
                                   int64_t KW) {
  std::vector<float> w(static_cast<size_t>(M * C * KH * KW));
  std::vector<float> rw(static_cast<size_t>(M * KW * C));
  const memory::desc plain = plain_desc({M, KW * C, 1, 1});
  for (int64_t r = 0; r < KH; ++r) {
    run_reorder(make_reorder(rows.md, plain), rows.rows[static_cast<size_t>(r)],
                wrap(plain, rw.data()));
    for_each_row_element(M, C, KH, KW, r, [&](size_t wi, size_t ri) { w[wi] = rw[ri]; });
  }
  return w;
}

void run_taps(const TapConv& t, const float* x, const float* bias, float* y, ThreadPool* pool) {
  g_runs.fetch_add(1, std::memory_order_relaxed);
  const NhwcConv& p = t.p;
  const int64_t pixels = p.N * p.OH * p.OW, KC = p.KW * p.C;
  float* buf = conv_thread_buffer(static_cast<size_t>(t.block * KC));
  for (int64_t q0 = 0; q0 < pixels; q0 += t.block) {
    const int64_t n = std::min(t.block, pixels - q0);
    const int size = n == t.block ? 0 : 1;
    for (int64_t r = 0; r < p.KH; ++r) {
      // Channels-last: split the block's pixels. Blocked (one image): split its planes.
      const int64_t items = p.block ? KC / p.block : n;
      auto fill = [&](int64_t b, int64_t e) {
        if (p.block == 8)
          fill_planes_blocked<8>(p, x, r, q0 / n, b, e, buf);
        else if (p.block == 16)
          fill_planes_blocked<16>(p, x, r, q0 / n, b, e, buf);
        else
          fill_row(p, x, r, q0 + b, e - b, buf + b * KC);
      };
      if (pool)
        pool->parallel_for(items, p.block ? n * p.block : KC, fill);
      else
        fill(0, items);
      const Role role = role_of(r, p.KH);
      const TapConv::Step& s = t.steps[size][role];
      ExecArgs args{arg(DNNL_ARG_SRC, s.src_md, buf),
                    arg(DNNL_ARG_WEIGHTS, t.rows->rows[static_cast<size_t>(r)]),
                    arg(DNNL_ARG_DST, s.dst_md, y + q0 * p.M)};
      if (role == kFirst && bias) args.add(arg(DNNL_ARG_BIAS, t.bias_md, bias));
      execute(s.prim, args, s.scratch_md);
    }
  }
}

float* conv_thread_buffer(size_t floats) {
  thread_local std::unique_ptr<float[]> data;
  thread_local size_t capacity = 0;
  if (floats > capacity) {
    data.reset();
    data = std::make_unique_for_overwrite<float[]>(floats);
    capacity = floats;
  }
  return data.get();
}

}  // namespace osprey::cpu
