// Winograd F(2x2, 3x3) of our own for channels-last 3x3 convolutions (stride 1, dilation 1,
// group 1, input and output channels multiples of 16) on panel_product.h. Each 2x2 block of
// output pixels (a tile) reads a 4x4 window of the input; per block of tiles:
//   1. the input transform V = B^T d B of every tile's window, 16 channels at a time, into
//      V[16 positions][tiles][C];
//   2. for each of the 16 positions, one product M[pos] [tiles, M] = V[pos] [tiles, C] x
//      U[pos] [C, M], where U = G g G^T are the weights transformed and packed once per node;
//   3. the output transform Y = A^T M A of each tile, with the bias, the residual Z (Y holds it
//      on entry) and a Relu or Clip, stored once.
// The products do 16 / 36 of the direct convolution's multiply-adds; U is 16 / 9 of the plain
// weights (oneDNN's F(4x4, 3x3) layout: 4x).
//
// Why: on an Ice Lake server core oneDNN 2.6's Winograd primitive ran ResNet50's 14x14 layers
// (256 channels) no faster than its direct one inside the model: its F(4x4) weights (9.4 MB a
// layer) come from memory at batch 1. Standalone on the same core, with the weights of five
// layers in turn, this form took 0.61x (14x14, 256 channels), 0.70x (28x28, 128) and 0.84x
// (56x56, 64) the direct primitive's time (docs/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/panel_product.h"

namespace osprey::cpu {

// Where the winograd attribute leaves a convolution to a Winograd algorithm (conv_dnnl.cc asks
// only then): kAuto, the form where it fits with kWinograd23MinChannels input and output
// channels or more; kAlways, wherever it fits (tests); kNever, nowhere (oneDNN's Winograd
// primitive there instead). Process-wide.
void set_conv_winograd23_policy(TapPolicy policy);
TapPolicy conv_winograd23_policy();
using Winograd23PolicyScope = FormPolicyScope<set_conv_winograd23_policy, conv_winograd23_policy>;
// How many times run_winograd23 has run in this process (tests check the form was taken).
int64_t winograd23_convolutions_run();

// Whether the form runs `p` under the policy: AVX-512 (panel_product), channels-last (not
// blocked), a 3x3 kernel with stride 1 and dilation 1, C and M multiples of 16, and with kAuto
// enough channels. Inside ResNet50 on an Ice Lake core the form took 0.72x the time of oneDNN's
// Winograd primitive on the 14x14 layers (256 channels) and 0.91x on the 28x28 ones (128), but
// 1.17x on the 56x56 ones (64 channels: products over 64 input channels of 32-tile blocks),
// where that primitive beats the direct one by itself.
constexpr int64_t kWinograd23MinChannels = 128;
bool winograd23_fits(const NhwcConv& p);

// U for the 16 positions, each packed as panel_product's B [C, M], in one allocation.
struct Winograd23Weights {
  std::vector<PanelB> u;  // 16, sharing one storage
};
std::shared_ptr<const Winograd23Weights> pack_winograd23_weights(const float* w, int64_t M, int64_t C);

struct Winograd23Conv {
  NhwcConv p;
  std::shared_ptr<const Winograd23Weights> w;
  bool clamp = false;  // a Relu (lo 0, hi infinity) or Clip
  float lo = 0, hi = 0;
};

// Tiles per block: V and M of a block together take about as many bytes as U (so that a small
// U and the block stay in L2 together), at least kWinograd23MinTiles, all of them where U is
// large (each block reads U once). Blocks are balanced.
constexpr int64_t kWinograd23MinTiles = 32;
int64_t winograd23_block_tiles(const NhwcConv& p);

// Runs it: x is [N, H, W, C], y is [N, OH, OW, M], holding Z already when p.has_z; bias is [M]
// or null. Up to `threads` OpenMP threads split the transforms by tiles and the products by
// position.
void run_winograd23(const Winograd23Conv& c, const float* x, const float* bias, float* y, int threads);

}  // namespace osprey::cpu
