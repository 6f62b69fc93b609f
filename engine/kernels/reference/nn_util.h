// Helpers shared by the nn family (conv.cc, pool.cc, gemm.cc, quantize.cc, rnn.cc):
// sliding-window geometry (kernel/strides/dilations/pads/auto_pad -> output sizes) and
// quantization arithmetic (round half to even, saturation).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {

// The reference ConvTranspose (conv.cc): GEMM + col2im, every form ONNX allows. The CPU
// kernel hands it the forms it does not take.
Status conv_transpose(KernelContext& ctx);

// Geometry of a sliding window over nd spatial dims.
struct Window {
  int64_t nd = 0;
  std::vector<int64_t> in;         // input spatial sizes
  std::vector<int64_t> kernel;     // kernel sizes
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pad_begin;  // pads at the start of each dim
  std::vector<int64_t> pad_end;
  std::vector<int64_t> out;        // output spatial sizes
  int64_t out_numel() const {
    int64_t n = 1;
    for (int64_t v : out) n *= v;
    return n;
  }
  int64_t in_numel() const {
    int64_t n = 1;
    for (int64_t v : in) n *= v;
    return n;
  }
  int64_t kernel_numel() const {
    int64_t n = 1;
    for (int64_t v : kernel) n *= v;
    return n;
  }
};

// Reads a per-spatial-dim int list attribute (default `def` for each dim when absent) and
// checks its length and that every value is >= `min`.
inline Status spatial_attr(const KernelContext& ctx, const char* name, int64_t nd, int64_t def,
                           int64_t min, std::vector<int64_t>* out) {
  if (!ctx.has_attr(name)) {
    out->assign(static_cast<size_t>(nd), def);
    return Status::Ok();
  }
  *out = ctx.attr_ints(name);
  if (static_cast<int64_t>(out->size()) != nd)
    return invalid_argument("attribute ", name, " has ", out->size(), " values, expected ", nd);
  for (int64_t v : *out)
    if (v < min) return invalid_argument("attribute ", name, " has invalid value ", v);
  return Status::Ok();
}

// auto_pad: NOTSET (explicit pads), VALID, SAME_UPPER or SAME_LOWER.
inline Status read_auto_pad(const KernelContext& ctx, std::string* auto_pad) {
  *auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (*auto_pad != "NOTSET" && *auto_pad != "VALID" && *auto_pad != "SAME_UPPER" &&
      *auto_pad != "SAME_LOWER")
    return invalid_argument("attribute auto_pad has invalid value '", *auto_pad, "'");
  return Status::Ok();
}

// Fills w (in, kernel must be set; nd = in.size()) from the strides, dilations, pads and
// auto_pad attributes and computes the output sizes of a Conv or pool.
// ceil_mode rounds the window count up (pools); a window that would start in the end
// padding is dropped.
inline Status window_from_attrs(const KernelContext& ctx, bool ceil_mode, Window* w) {
  const int64_t nd = w->nd = static_cast<int64_t>(w->in.size());
  if (static_cast<int64_t>(w->kernel.size()) != nd)
    return invalid_argument("kernel_shape has ", w->kernel.size(), " values, expected ", nd);
  for (int64_t k : w->kernel)
    if (k <= 0) return invalid_argument("kernel_shape has invalid value ", k);
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "strides", nd, 1, 1, &w->strides));
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "dilations", nd, 1, 1, &w->dilations));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (static_cast<int64_t>(pads.size()) != 2 * nd)
    return invalid_argument("attribute pads has ", pads.size(), " values, expected ", 2 * nd);
  for (int64_t p : pads)
    if (p < 0) return invalid_argument("attribute pads has negative value ", p);
  std::string auto_pad;
  OSPREY_RETURN_IF_ERROR(read_auto_pad(ctx, &auto_pad));
  w->pad_begin.assign(static_cast<size_t>(nd), 0);
  w->pad_end.assign(static_cast<size_t>(nd), 0);
  w->out.assign(static_cast<size_t>(nd), 0);
  constexpr int64_t kBig = int64_t{1} << 40;  // keeps size arithmetic far from overflow
  for (size_t i = 0; i < static_cast<size_t>(nd); ++i) {
    const int64_t in = w->in[i], s = w->strides[i], d = w->dilations[i], k = w->kernel[i];
    if (in < 0 || in > kBig || k > kBig || s > kBig || d > kBig || pads[i] > kBig ||
        pads[i + nd] > kBig)
      return invalid_argument("window sizes are too large");
    const int64_t dk = (k - 1) * d + 1;  // dilated kernel extent
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + dk - in);
      const int64_t small = total / 2, large = total - small;
      w->pad_begin[i] = auto_pad == "SAME_UPPER" ? small : large;
      w->pad_end[i] = auto_pad == "SAME_UPPER" ? large : small;
      w->out[i] = out;
      continue;
    }
    if (auto_pad == "NOTSET") {
      w->pad_begin[i] = pads[i];
      w->pad_end[i] = pads[i + nd];
    }
    const int64_t span = in + w->pad_begin[i] + w->pad_end[i] - dk;
    if (span < 0)
      return invalid_argument("kernel extent ", dk, " is larger than the padded input ",
                              in + w->pad_begin[i] + w->pad_end[i], " on spatial dim ", i);
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= in + w->pad_begin[i]) --out;
    w->out[i] = out;
  }
  return Status::Ok();
}

// The reference QuantizeLinear and DequantizeLinear (quantize.cc): the CPU kernels' fallback
// for the forms they leave.
Status quantize_linear(KernelContext& ctx);
Status dequantize_linear(KernelContext& ctx);
Status dynamic_quantize_linear(KernelContext& ctx);
// com.osprey QLinearConv (conv.cc), the CPU kernel's oracle and its fallback.
Status fused_qlinear_conv(KernelContext& ctx);
// ConvInteger and com.osprey ConvIntegerToFloat (conv.cc), the CPU kernel's oracles and fallbacks.
Status conv_integer(KernelContext& ctx);
Status conv_integer_to_float(KernelContext& ctx);
// MatMulInteger (gemm.cc), the CPU kernel's oracle and its fallback.
Status matmul_integer(KernelContext& ctx);
Status matmul_integer_to_float(KernelContext& ctx);
Status qlinear_matmul(KernelContext& ctx);
// com.osprey QLinearAdd (qoperator_elementwise.cc), the CPU kernel's oracle and its fallback.
Status qlinear_add(KernelContext& ctx);

// Rounds to nearest, ties to even, and saturates to Q's range (NaN -> 0).
template <class Q>
inline Q saturate_round(double v) {
  if (std::isnan(v)) return Q(0);
  const double r = std::nearbyint(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<Q>::min());
  constexpr double hi = static_cast<double>(std::numeric_limits<Q>::max());
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// Zero point and scale values: a scalar / 1-element tensor gives one value, a 1-D tensor one
// per index along an axis. Checks that the tensor has 1 or `n` elements (n = 0: only scalars).
inline Status per_axis_count(const Tensor& t, int64_t n, const char* what) {
  if (t.numel() == 1 && t.rank() <= 1) return Status::Ok();
  if (n > 0 && t.rank() == 1 && t.numel() == n) return Status::Ok();
  return invalid_argument(what, " has shape ", shape_to_string(t.shape()),
                          n > 0 ? str_cat("; expected a scalar or [", n, "]") : "; expected a scalar");
}

}  // namespace osprey::ref
