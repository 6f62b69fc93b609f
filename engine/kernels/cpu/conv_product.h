// A channels-last 2-D convolution (group 1) as one matrix product on panel_product.h: the
// input pixels under each output pixel's taps are copied side by side (im2col, [pixels,
// KH * KW * C]; a 1x1 convolution with stride 1 and no padding reads X as it is), and the
// product with the weights, packed once as B [KH * KW * C, M], writes Y with the bias, the
// residual Z (Y holds it on entry) and a Relu or Clip.
//
// Why: where an image has few output pixels and the weights are large (ResNet50's layer 4:
// 7x7 pixels, 4-9 MB of weights per convolution), the convolution reads each weight for only
// a few dozen multiply-adds, and oneDNN's direct and 1x1 kernels wait on the weights coming
// from memory (98-111 GFLOP/s inside ResNet50 on an Ice Lake core whose FMA peak is 180).
// panel_product prefetches the next block of weights while it multiplies the current one.
#pragma once

#include <memory>

#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/panel_product.h"

namespace osprey::cpu {

// kAuto: the product form where it pays (product_conv_pays); kAlways: wherever it applies (tests
// check it on any shape, on CPUs that run panel_product); kNever: not at all. Process-wide.
void set_conv_product_policy(TapPolicy policy);
TapPolicy conv_product_policy();
using ProductPolicyScope = FormPolicyScope<set_conv_product_policy, conv_product_policy>;
// How many times run_product_conv has run in this process (tests check the form was taken).
int64_t product_convolutions_run();

// kAuto takes the form for a convolution with at most kProductMaxPixels output pixels per
// image and at least kProductMinWeightBytes of weights, and for a narrowing pointwise one
// (1x1, stride 1, no padding, fewer output than input channels, kProductMinNarrowingChannels
// input channels or more) whose output channels are not a multiple of 32, the block of output
// channels oneDNN's brgconv_1x1 packs its weights in (Acdb32a). Measured inside the models on
// an Ice Lake core: the inverted-residual projections to 24 and 40 channels of MobileNetV2 and
// EfficientNet-Lite0 took 25-35% less time than in brgconv_1x1, those to 80 and 112 channels
// 5-10% less at 1 thread (level at 2); those to multiples of 32 (64-320 channels), and
// ResNet50's narrowing 1x1 convolutions (to 64-256 channels, with a Relu), as long or longer.
// From 32 input channels since panel_product's tiles keep their sums in registers (Zen 4, one
// core): the first blocks' 32 -> 16 projections at 112x112 took 0.13 ms against brgconv_1x1's
// 0.17-0.18, in both MobileNetV2 and EfficientNet-Lite0.
constexpr int64_t kProductMaxPixels = 64;
constexpr int64_t kProductMinWeightBytes = int64_t{512} << 10;
constexpr int64_t kProductMinNarrowingChannels = 32;

// Whether the product form should run `p` under the policy (never without AVX-512, nor for a
// blocked layout).
bool product_conv_pays(const NhwcConv& p);

// The weights [M, C, KH, KW] packed as B [KH * KW * C, M] (k = (kh * KW + kw) * C + c).
std::shared_ptr<const PanelB> pack_product_weights(const float* w, int64_t M, int64_t C, int64_t KH,
                                                   int64_t KW);

struct ProductConv {
  NhwcConv p;
  std::shared_ptr<const PanelB> b;
  bool clamp = false;  // a Relu (lo 0, hi infinity) or Clip
  float lo = 0, hi = 0;
};

// Runs it: x is [N, H, W, C], y is [N, OH, OW, M], holding Z already when p.has_z; bias is [M]
// or null. Pixels go in blocks of kProductRows, so the copied taps stay bounded.
constexpr int64_t kProductRows = 256;
void run_product_conv(const ProductConv& c, const float* x, const float* bias, float* y, int threads);

}  // namespace osprey::cpu
