// A channels-last 2-D depthwise convolution (one input channel per group, one output channel
// per input channel) in fast mode, on float32 FMAs over bfloat16 activations: X [N, H, W, C]
// and Y [N, OH, OW, C] bfloat16 or float32, the weights float32 packed once as [KH * KW][C]
// (channels padded to 16), accumulation in float32. Tiles of kDwTile output pixels x 16
// channels, of two output rows at stride 1 and one at stride 2, accumulate every tap in
// registers; each input pixel of an input row is widened once and used by every tap of the
// tile that reads it (at stride 1 for both output rows). Bias and the activation (none,
// Relu, Clip) are applied as a tile is stored; a bfloat16 Y is rounded to nearest even. Taps
// outside the input (the pads) are skipped as zeros. Output rows are split across threads.
// Unlike oneDNN's bf16 forms, the weights stay float32 and a float32 X is not rounded: the
// form is at least as accurate as bf16 compute (a float32 X and Y give float32's result).
//
// Why: oneDNN 2.6's bfloat16 depthwise kernels (brdgmm_dw, jit_dw) multiply with vdpbf16ps,
// which Intel's cores issue on one port against FMA's two: on a Xeon with AMX they took
// 1.2-2.2x their own float32 kernels' time (MobileNetV2's and EfficientNet-Lite0's layers), and
// keeping those layers in float32 costs the 1x1 convolutions around them more (conversions).
// AMD's Zen 4 issues vdpbf16ps at twice the FMA rate, yet there too brdgmm_dw in bf16 was slower
// than the form (MobileNetV2's depthwise layers 0.82 against 0.64 ms on one core; the first,
// reading the float32 stem's output, 0.20 against 0.09 ms): the form runs wherever the CPU
// has avx512_bf16 (depthwise_fma_pays). The oracle in the tests is the reference Conv on
// bf16-rounded values.
#pragma once

#include <memory>
#include <vector>

#include "kernels/cpu/conv_tiles.h"
#include "osprey/status.h"
#include "threading/thread_pool.h"

namespace osprey::cpu {

// Output pixels per register tile: 7 divides the widths of 224-pixel networks (112 ... 7), and
// ran both MobileNetV2's and EfficientNet-Lite0's depthwise layers 12-15% faster than 6 (8 was
// in between).
constexpr int kDwTile = 7;

// The form's policy (conv_taps.h's TapPolicy values): kAuto, where depthwise_fma_pays; kAlways,
// wherever the CPU runs it (tests); kNever. Process-wide.
void set_depthwise_policy(TapPolicy policy);
TapPolicy depthwise_policy();
using DepthwisePolicyScope = FormPolicyScope<set_depthwise_policy, depthwise_policy>;

// The CPU runs the form (AVX-512 with avx512_bf16), where it beat oneDNN's bfloat16 depthwise
// kernels on every CPU measured (Intel's cores with and without AMX, AMD's Zen 4; see above).
bool depthwise_fma_pays();

// Whether a bfloat16-compute depthwise node runs in the form, under the policy.
bool depthwise_wanted();

struct DwConv {
  int64_t N = 0, C = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t KH = 0, KW = 0, SH = 1, SW = 1, PH = 0, PW = 0;  // stride 1 or 2; leading pads
  bool x_bf16 = false, y_bf16 = false;
  TileAct act = TileAct::kNone;
  float lo = 0, hi = 0;  // kClip's bounds
  std::shared_ptr<const std::vector<float>> weights;  // pack_depthwise_weights
};

// Whether a depthwise problem fits the form: 2-D, KH 1-7, KW 3, 5 or 7, strides 1 or 2,
// dilation 1 (checked by the caller), pads below the kernel.
bool depthwise_fits(int64_t KH, int64_t KW, int64_t SH, int64_t SW, int64_t PH, int64_t PW);

// W [C, 1, KH, KW] (ONNX's layout) as [KH * KW][round_up(C, 16)] floats, 0 past C.
std::vector<float> pack_depthwise_weights(const float* w, int64_t C, int64_t KH, int64_t KW);

// Runs it: x is [N, H, W, C] (bfloat16 bits when d.x_bf16), y [N, OH, OW, C] (bfloat16 when
// d.y_bf16), bias [C] or null.
void run_depthwise(const DwConv& d, const void* x, const float* bias, void* y, ThreadPool* pool);

// How many times run_depthwise has run in this process (tests check that the form was taken).
int64_t depthwise_convolutions_run();

}  // namespace osprey::cpu
