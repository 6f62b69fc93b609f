// ConvTranspose (float32) on the CPU. The upsampling form runs on a kernel of its own: 2-D,
// one group, kernel equal to the stride (s x t with t = 1 or 2 and s * t <= 8), no dilation,
// no pads, no output padding. There every input pixel owns its own s x t block of outputs,
//   Y[n, m, i*s + a, j*t + b] = sum_c X[n, c, i, j] * W[c, m, a, b] + B[m],
// a product per input row with no overlap to add up (text-detector heads, U-Nets and FPNs
// upsample this way). Per input row, a block of up to 8 (channel, a, b) outputs accumulates
// over the input channels on two vectors of 16 input columns, then is stored interleaved into
// the output rows. The weights are packed once per node ([m][a][b][c], contiguous over the
// input channels). oneDNN 2.6's deconvolution took 5.3 ms (gemm:jit, nchw) to 9.7 ms (its
// blocked jit kernel, reorders included) for PP-OCR's 24 -> 24 channels at 160x160 -> 320x320
// on one core; the reference 6.8 ms. The kernel needs AVX-512; other forms and CPUs go to the
// reference kernel (GEMM + col2im), which is also the oracle of the tests.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

constexpr int64_t kMaxBlock = 8;  // (channel, a, b) outputs per register block
constexpr int64_t kMaxChannels = 512;  // input channels the gathered columns hold (a stack buffer)

struct Upsampling {
  int64_t N = 0, C = 0, H = 0, W = 0, M = 0, s = 0, t = 0;
};

struct ConvTransposeState final : KernelState {
  // The constant W (shared storage, which keeps its address from being reused while `packed`
  // stands for it) and W as [M][s][t][C]; both empty when W is computed or the node's
  // attributes are not the upsampling form's.
  Tensor weights;
  std::vector<float> packed;
};

// Whether the node's attributes and shapes are the upsampling form; fills `u`.
bool upsampling_form(const KernelContext& ctx, Upsampling* u) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.input_value(0).is_tensor() ||
      !ctx.input_value(1).is_tensor())
    return false;
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (x.dtype() != DType::kFloat32 || w.dtype() != DType::kFloat32 || x.rank() != 4 || w.rank() != 4)
    return false;
  if (ctx.has_input(2)) {
    if (!ctx.input_value(2).is_tensor()) return false;
    const Tensor& b = ctx.input(2);
    if (b.dtype() != DType::kFloat32 || b.rank() != 1 || b.dim(0) != w.dim(1)) return false;
  }
  const std::vector<int64_t> k = {w.dim(2), w.dim(3)};
  auto all = [&](const char* name, int64_t n, int64_t v) {
    if (!ctx.has_attr(name)) return true;
    const auto vals = ctx.attr_ints(name);
    return static_cast<int64_t>(vals.size()) == n &&
           std::all_of(vals.begin(), vals.end(), [&](int64_t e) { return e == v; });
  };
  if (ctx.attr_int("group", 1) != 1 || w.dim(0) != x.dim(1)) return false;
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != k) return false;
  if (ctx.attr_ints("strides", {1, 1}) != k) return false;
  if (!all("dilations", 2, 1) || !all("pads", 4, 0) || !all("output_padding", 2, 0)) return false;
  const std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return false;
  if (ctx.has_attr("output_shape")) {
    std::vector<int64_t> os = ctx.attr_ints("output_shape");
    if (os.size() == 4) os.erase(os.begin(), os.begin() + 2);
    if (os != std::vector<int64_t>{x.dim(2) * k[0], x.dim(3) * k[1]}) return false;
  }
  *u = {x.dim(0), x.dim(1), x.dim(2), x.dim(3), w.dim(1), k[0], k[1]};
  return (u->t == 1 || u->t == 2) && u->s * u->t <= kMaxBlock && u->s >= 1 && u->C <= kMaxChannels;
}

// W [C, M, s, t] -> [M][s][t][C].
void pack(const float* w, int64_t C, int64_t M, int64_t s, int64_t t, float* out) {
  const int64_t taps = s * t;
  for (int64_t c = 0; c < C; ++c)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t k = 0; k < taps; ++k) out[(m * taps + k) * C + c] = w[(c * M + m) * taps + k];
}

// The mask of the first k lanes of 16 (none for k <= 0, all for k >= 16).
inline __mmask16 lanes(int64_t k) {
  return k >= 16 ? __mmask16(0xFFFF) : k <= 0 ? __mmask16(0) : __mmask16((1u << k) - 1);
}

// Up to 32 input columns j0 .. j0 + 31 of one input row, gathered per input channel:
// xs[c * 32 + k] = X[n, c, i, j0 + k], zero past the row's end. The channels of one row lie a
// plane apart (often a multiple of 4 KiB), which would make every channel's loads compete for
// the same L1 sets; the gathered copy is read once per block of outputs instead.
using BlockFn = void (*)(const Upsampling&, const float*, const float*, const float*, float*,
                         int64_t, int64_t, int64_t, int64_t, int64_t);

// Outputs m0 .. m0 + R/(s*t) - 1 (R = their (m, a, b) count) of input row i of image n, input
// columns j0 .. j0 + left - 1 (left <= 32) from `xs`: accumulates over the input channels,
// adds the bias, stores rows i*s + a of those output channels.
template <int R, int T>
__attribute__((target("avx512f"))) void upsample_block(const Upsampling& u, const float* xs,
                                                       const float* wp, const float* bias,
                                                       float* y, int64_t n, int64_t i,
                                                       int64_t m0, int64_t j0, int64_t left) {
  const int64_t C = u.C, s = u.s, OH = u.H * s, OW = u.W * T;
  const float* wb = wp + m0 * s * T * C;  // the block's packed weights, R rows of C
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (int64_t c = 0; c < C; ++c) {
    const __m512 x0 = _mm512_loadu_ps(xs + c * 32);
    const __m512 x1 = _mm512_loadu_ps(xs + c * 32 + 16);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 wv = _mm512_set1_ps(wb[r * C + c]);
      acc[r][0] = _mm512_fmadd_ps(x0, wv, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x1, wv, acc[r][1]);
    }
  }
  const __mmask16 m0k = lanes(left), m1k = lanes(left - 16);
  const __m512i lo = _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
  const __m512i hi = _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8);
#pragma GCC unroll 8
  for (int r = 0; r < R; r += T) {
    const int64_t m = m0 + r / (s * T), a = (r / T) % s;
    const __m512 bv = _mm512_set1_ps(bias ? bias[m] : 0.0f);
    float* row = y + ((n * u.M + m) * OH + i * s + a) * OW + j0 * T;
    if constexpr (T == 1) {
      _mm512_mask_storeu_ps(row, m0k, _mm512_add_ps(acc[r][0], bv));
      _mm512_mask_storeu_ps(row + 16, m1k, _mm512_add_ps(acc[r][1], bv));
    } else {
      // Columns j*2 + b: interleave the b = 0 and b = 1 sums, 64 outputs for 32 inputs.
      const int64_t outs = std::min<int64_t>(64, 2 * left);
      for (int h = 0; h < 2; ++h) {
        const __m512 e = _mm512_add_ps(acc[r][h], bv), o = _mm512_add_ps(acc[r + 1][h], bv);
        for (int q = 0; q < 2; ++q) {
          const int64_t first = h * 32 + q * 16;
          if (outs <= first) continue;
          _mm512_mask_storeu_ps(row + first, lanes(outs - first), _mm512_permutex2var_ps(e, q ? hi : lo, o));
        }
      }
    }
  }
}

// xs[c * 32 + k] = x[c * plane + k] for k < left, 0 for left <= k < 32.
__attribute__((target("avx512f"))) void gather_columns(const float* x, int64_t plane, int64_t C,
                                                       int64_t left, float* xs) {
  const __mmask16 m0k = lanes(left), m1k = lanes(left - 16);
  for (int64_t c = 0; c < C; ++c) {
    _mm512_store_ps(xs + c * 32, _mm512_maskz_loadu_ps(m0k, x + c * plane));
    _mm512_store_ps(xs + c * 32 + 16, _mm512_maskz_loadu_ps(m1k, x + c * plane + 16));
  }
}

template <int T>
BlockFn block_fn(int64_t R) {
  switch (R) {
    case 1: return T == 1 ? &upsample_block<1, T> : nullptr;
    case 2: return &upsample_block<2, T>;
    case 3: return T == 1 ? &upsample_block<3, T> : nullptr;
    case 4: return &upsample_block<4, T>;
    case 5: return T == 1 ? &upsample_block<5, T> : nullptr;
    case 6: return &upsample_block<6, T>;
    case 7: return T == 1 ? &upsample_block<7, T> : nullptr;
    case 8: return &upsample_block<8, T>;
    default: return nullptr;
  }
}

Status run_upsampling(KernelContext& ctx, const Upsampling& u, const float* wp) {
  const Tensor& x = ctx.input(0);
  const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(
                                        0, DType::kFloat32, {u.N, u.M, u.H * u.s, u.W * u.t}));
  if (y.numel() == 0) return Status::Ok();
  const int64_t taps = u.s * u.t;
  const int64_t per_block = std::max<int64_t>(1, kMaxBlock / taps);  // output channels
  const int64_t full_blocks = u.M / per_block, rest = u.M % per_block;
  const BlockFn full = u.t == 1 ? block_fn<1>(per_block * taps) : block_fn<2>(per_block * taps);
  const BlockFn tail = rest == 0 ? nullptr : u.t == 1 ? block_fn<1>(rest * taps) : block_fn<2>(rest * taps);
  if (!full && full_blocks > 0) return internal_error("ConvTranspose: no block kernel for ", per_block * taps);
  if (rest && !tail) return internal_error("ConvTranspose: no block kernel for ", rest * taps);
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  ctx.parallel_for(u.N * u.H, u.M * taps * u.C * u.W, [&](int64_t b, int64_t e) {
    alignas(64) float xs[kMaxChannels * 32];
    for (int64_t row = b; row < e; ++row) {
      const int64_t n = row / u.H, i = row % u.H;
      for (int64_t j0 = 0; j0 < u.W; j0 += 32) {
        const int64_t left = std::min<int64_t>(32, u.W - j0);
        gather_columns(xp + (n * u.C * u.H + i) * u.W + j0, u.H * u.W, u.C, left, xs);
        for (int64_t blk = 0; blk < full_blocks; ++blk)
          full(u, xs, wp, bias, yp, n, i, blk * per_block, j0, left);
        if (rest) tail(u, xs, wp, bias, yp, n, i, full_blocks * per_block, j0, left);
      }
    }
  });
  return Status::Ok();
}

}  // namespace

Status conv_transpose(KernelContext& ctx) {
  Upsampling u;
  if (!avx512_kernels_available() || !upsampling_form(ctx, &u)) return ref::conv_transpose(ctx);
  const Tensor& w = ctx.input(1);
  auto* st = dynamic_cast<ConvTransposeState*>(ctx.state());
  if (st && !st->packed.empty() && st->weights.raw_data() == w.raw_data() &&
      static_cast<int64_t>(st->packed.size()) == w.numel())
    return run_upsampling(ctx, u, st->packed.data());
  // A computed W (or a run without the prepared state): packed for this run.
  std::vector<float> packed(static_cast<size_t>(w.numel()));
  pack(w.data<float>(), u.C, u.M, u.s, u.t, packed.data());
  return run_upsampling(ctx, u, packed.data());
}

Result<std::shared_ptr<KernelState>> prepare_conv_transpose(const KernelContext& ctx) {
  auto st = std::make_shared<ConvTransposeState>();
  if (ctx.has_input(1) && ctx.input_value(1).is_tensor()) {
    const Tensor& w = ctx.input(1);
    // Packed only where the attributes can make the upsampling form (the input's shape is
    // checked per run).
    if (w.dtype() == DType::kFloat32 && w.rank() == 4 && w.numel() > 0 && ctx.attr_int("group", 1) == 1 &&
        ctx.attr_ints("strides", {1, 1}) == std::vector<int64_t>{w.dim(2), w.dim(3)}) {
      st->weights = w;
      st->packed.resize(static_cast<size_t>(w.numel()));
      pack(w.data<float>(), w.dim(0), w.dim(1), w.dim(2), w.dim(3), st->packed.data());
    }
  }
  return std::shared_ptr<KernelState>(std::move(st));
}

}  // namespace osprey::cpu
