#include "kernels/cpu/conv_product.h"

#include <algorithm>
#include <atomic>
#include <cstring>

namespace osprey::cpu {
namespace {

std::atomic<int> g_policy{static_cast<int>(TapPolicy::kAuto)};
std::atomic<int64_t> g_runs{0};

bool reads_x_as_is(const NhwcConv& p) {
  return p.KH == 1 && p.KW == 1 && p.stride_h == 1 && p.stride_w == 1 && p.pad_top == 0 &&
         p.pad_left == 0 && p.OH == p.H && p.OW == p.W;
}

// Rows [r0, r0 + rows) of the im2col matrix (row = (n * OH + oh) * OW + ow) into a.
void copy_taps(const NhwcConv& p, const float* x, int64_t r0, int64_t rows, float* a) {
  const int64_t K = p.KH * p.KW * p.C;
  const size_t c_bytes = static_cast<size_t>(p.C) * sizeof(float);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t pix = r0 + r, ow = pix % p.OW, oh = pix / p.OW % p.OH, n = pix / (p.OW * p.OH);
    float* row = a + r * K;
    const int64_t iw0 = ow * p.stride_w - p.pad_left;
    // Taps [kw0, kw1) of a kernel row fall inside the image; with dilation 1 they are one run
    // of (kw1 - kw0) * C floats in X (an image stem's 7 taps of 3 channels: one copy, not 7).
    int64_t kw0 = 0, kw1 = p.KW;
    if (p.dil_w == 1) {
      kw0 = std::clamp<int64_t>(-iw0, 0, p.KW);
      kw1 = std::clamp<int64_t>(p.W - iw0, kw0, p.KW);
    }
    for (int64_t kh = 0; kh < p.KH; ++kh) {
      const int64_t ih = oh * p.stride_h - p.pad_top + kh * p.dil_h;
      float* to = row + kh * p.KW * p.C;
      if (ih < 0 || ih >= p.H) {
        std::memset(to, 0, c_bytes * static_cast<size_t>(p.KW));
        continue;
      }
      const float* line = x + (n * p.H + ih) * p.W * p.C;
      if (p.dil_w == 1) {
        std::memset(to, 0, c_bytes * static_cast<size_t>(kw0));
        std::memcpy(to + kw0 * p.C, line + (iw0 + kw0) * p.C, c_bytes * static_cast<size_t>(kw1 - kw0));
        std::memset(to + kw1 * p.C, 0, c_bytes * static_cast<size_t>(p.KW - kw1));
        continue;
      }
      for (int64_t kw = 0; kw < p.KW; ++kw) {
        const int64_t iw = iw0 + kw * p.dil_w;
        if (iw < 0 || iw >= p.W)
          std::memset(to + kw * p.C, 0, c_bytes);
        else
          std::memcpy(to + kw * p.C, line + iw * p.C, c_bytes);
      }
    }
  }
}

}  // namespace

void set_conv_product_policy(TapPolicy policy) { g_policy.store(static_cast<int>(policy)); }
TapPolicy conv_product_policy() { return static_cast<TapPolicy>(g_policy.load()); }
int64_t product_convolutions_run() { return g_runs.load(std::memory_order_relaxed); }

bool product_conv_pays(const NhwcConv& p) {
  if (p.block != 0 || !panel_product_supported()) return false;
  switch (conv_product_policy()) {
    case TapPolicy::kNever: return false;
    case TapPolicy::kAlways: return true;
    case TapPolicy::kAuto: break;
  }
  if (p.OH * p.OW <= kProductMaxPixels &&
      p.M * p.C * p.KH * p.KW * static_cast<int64_t>(sizeof(float)) >= kProductMinWeightBytes)
    return true;
  return reads_x_as_is(p) && p.C >= kProductMinNarrowingChannels && p.M < p.C && p.M % 32 != 0;
}

std::shared_ptr<const PanelB> pack_product_weights(const float* w, int64_t M, int64_t C, int64_t KH,
                                                   int64_t KW) {
  // B [K, M] with k = (kh * KW + kw) * C + c, straight from W [M, C, KH, KW]: a panel row
  // reads one float from each of its output channels' rows of W, and the next rows of B (the
  // next input channels) read their neighbours, while those lines are still in cache.
  const int64_t taps = KH * KW;
  auto pb = std::make_shared<PanelB>(make_panel_b(taps * C, M));
  fill_panel_b(*pb, [&](int64_t k, int64_t n0, int64_t width, float* out) {
    const float* from = w + n0 * C * taps + (k % C) * taps + k / C;
    for (int64_t j = 0; j < width; ++j) out[j] = from[j * C * taps];
  });
  return pb;
}

void run_product_conv(const ProductConv& c, const float* x, const float* bias, float* y, int threads) {
  const NhwcConv& p = c.p;
  const int64_t pixels = p.N * p.OH * p.OW, K = p.KH * p.KW * p.C;
  const float beta = p.has_z ? 1.0f : 0.0f;
  g_runs.fetch_add(1, std::memory_order_relaxed);
  if (reads_x_as_is(p)) {
    panel_product(*c.b, x, pixels, p.C, bias, beta, y, threads, c.clamp, c.lo, c.hi);
    return;
  }
  float* a = conv_thread_buffer(static_cast<size_t>(std::min(pixels, kProductRows) * K));
  for (int64_t r0 = 0; r0 < pixels; r0 += kProductRows) {
    const int64_t rows = std::min(kProductRows, pixels - r0);
    copy_taps(p, x, r0, rows, a);
    panel_product(*c.b, a, rows, K, bias, beta, y + r0 * p.M, threads, c.clamp, c.lo, c.hi);
  }
}

}  // namespace osprey::cpu
