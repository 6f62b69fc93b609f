// A channels-last 2-D convolution (group 1) on register tiles: for each output row and each
// block of 16 output channels, tiles of up to 6 output pixels x 16 channels accumulate over
// every kernel tap and input channel in registers (one broadcast of an input value, two loads
// of packed weights, twelve FMAs per step on AVX2), then take the bias, the residual Z (already
// in Y) and the activation, and are stored once. The input is first copied into a zero-bordered
// buffer ([N, Hp, Wp, C]) so that every tap of every pixel is in bounds; the weights are packed
// once per node as [ceil(M/16)][KH][KW][C][16] panels.
//
// Why: without AVX-512, oneDNN 2.6's direct kernel (jit:avx2) runs ResNet's 64-channel 3x3
// layers over nhwc at 50-70 GFLOP/s on one core, and these tiles at 65-85 (docs/PERFORMANCE.md).
// Compiled per ISA like attention_tiles.h; the oracle in the tests is the reference Conv.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/row_kernels.h"
#include "threading/thread_pool.h"

namespace osprey::cpu {

// The tile form's policy (conv_taps.h's TapPolicy values): kAuto, where tiles_pay; kAlways,
// wherever it applies (tests); kNever. While the tap policy is kAlways the tile form steps
// aside, so that tests of the tap form see it. Process-wide.
void set_conv_tile_policy(TapPolicy policy);
TapPolicy conv_tile_policy();
using TilePolicyScope = FormPolicyScope<set_conv_tile_policy, conv_tile_policy>;
// How many times run_tile_conv has run in this process (tests check that the form was taken).
int64_t tile_convolutions_run();

// The activations the tile form applies itself (others leave the node on oneDNN's forms).
enum class TileAct { kNone, kRelu, kClip };

// The activation named by a FusedConv's attributes as a TileAct, or false when the tile form
// has none for it.
bool tile_activation(const std::string& name, const std::vector<float>& params, TileAct* act,
                     float* lo, float* hi);

// Floats of the packed weights for M output channels of C x KH x KW.
int64_t conv_panel_floats(int64_t M, int64_t C, int64_t KH, int64_t KW);

// Packs W [M, C, KH, KW] (ONNX's layout) as panels: dst[((mb * KH + kh) * KW + kw) * C * 16 +
// c * 16 + m % 16] = W[mb * 16 + m % 16, c, kh, kw], 0 past M.
void pack_conv_panels(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW, float* dst);

// One problem, ready to run (immutable; shared by concurrent runs).
struct TileConv {
  NhwcConv p;
  TileAct act = TileAct::kNone;
  float lo = 0, hi = 0;                // kClip's bounds
  int64_t Hp = 0, Wp = 0;              // the padded input's extent
  bool padded = false;                 // whether the input is copied into a bordered buffer
  std::shared_ptr<const std::vector<float>> panels;  // the packed weights
};

// Whether the tile form should run `p` under the policies: with kAuto, on an AVX2 or AVX-512
// CPU where oneDNN picked its AVX2 direct kernel, for a kernel of more than one tap and 16 to
// 127 input channels. From 128 channels
// up the tap form (conv_taps.h) ran faster inside ResNet50 (its 1x1 products keep the weights
// in L1; here a 16-channel block's weights for 256 input channels, 147 KiB, stream from L2 for
// every tile); below 16 a tap's channel loop is too short to pay.
bool tiles_pay(const NhwcConv& p, const char* direct_impl);

// Prepares `p` with packed weights `panels` (from pack_conv_panels).
TileConv make_tile_conv(const NhwcConv& p, TileAct act, float lo, float hi,
                        std::shared_ptr<const std::vector<float>> panels);

// Runs it with the ISA variant `isa`: x is [N, H, W, C], y is [N, OH, OW, M] (holding Z when
// p.has_z), bias is [M] or null. The padded copy of x goes in a buffer kept by the calling
// thread; fails (kResourceExhausted) when that buffer would pass max_elements floats.
Status run_tile_conv(VectorIsa isa, const TileConv& t, const float* x, const float* bias,
                     float* y, ThreadPool* pool, int64_t max_elements);

}  // namespace osprey::cpu
