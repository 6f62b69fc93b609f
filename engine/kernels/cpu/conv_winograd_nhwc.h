// Winograd F(2x2, 3x3) and F(4x4, 3x3) of our own for channels-last 3x3 convolutions (stride 1,
// dilation 1, group 1, input and output channels multiples of 16) on panel_product.h. Each
// m x m block of output pixels (a tile, m = 2 or 4) reads an (m + 2) x (m + 2) window of the
// input, P = (m + 2)^2 positions; per block of tiles:
//   1. the input transform V = B^T d B of every tile's window, 16 channels at a time, into
//      V[P][tiles][C];
//   2. for each position, one product M[pos] [tiles, M] = V[pos] [tiles, C] x U[pos] [C, M],
//      where U = G g G^T are the weights transformed and packed once per node;
//   3. the output transform Y = A^T M A of each tile, with the bias, the residual Z (Y holds it
//      on entry) and a Relu or Clip, stored once.
// F(2x2) does 16/36 of the direct convolution's multiply-adds with U 16/9 the plain weights'
// size; F(4x4) 36/144 with U 4x (Lavin and Gray's matrices; its transforms weigh inputs by up
// to 5 and outputs by up to 8, so it rounds a little more).
//
// Why: on an Ice Lake server core oneDNN 2.6's Winograd primitive (`jit_fp32_wino_2x3`, an
// F(2x2) too) ran ResNet50's 14x14 layers (256 channels) slower than its direct one, and needs
// reorders around it for channels-last tensors. Our F(2x2) took 0.52-0.56x its time there, and
// our F(4x4), where U stays small (128 channels or fewer; at 256 channels its U would be 9.4 MB
// a layer, from memory at batch 1), 0.70-0.94x its time on the 64- and 128-channel layers
// (`osprey_tile_bench --only winograd`, docs/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/panel_product.h"

namespace osprey::cpu {

// Where the winograd attribute leaves a convolution to a Winograd algorithm (conv_dnnl.cc asks
// only then): kAuto, the form where it fits with kWinogradNhwcMinChannels input and output
// channels or more; kAlways, wherever it fits (tests); kNever, nowhere (oneDNN's Winograd
// primitive there instead). Process-wide.
void set_conv_winograd_nhwc_policy(TapPolicy policy);
TapPolicy conv_winograd_nhwc_policy();
using WinogradNhwcPolicyScope = FormPolicyScope<set_conv_winograd_nhwc_policy, conv_winograd_nhwc_policy>;
// How many times run_winograd_nhwc has run in this process, and with F(4x4) (tests check the
// form was taken).
int64_t winograd_nhwc_convolutions_run();
int64_t winograd_nhwc_f4_convolutions_run();

// Whether the form runs `p` under the policy: AVX-512 (panel_product), channels-last (not
// blocked), a 3x3 kernel with stride 1 and dilation 1, C and M multiples of 16, and with kAuto
// enough channels.
constexpr int64_t kWinogradNhwcMinChannels = 64;
bool winograd_nhwc_fits(const NhwcConv& p);

// The output tile for `p`: 4 (F(4x4, 3x3)) where C x M is at most
// winograd_f4_max_channel_product(), 2 above. F(4x4)'s U (36 x C x M floats, 2.25 MiB at 128 x
// 128) is read once per block of tiles; above 128 x 128 it comes from L3 or memory. Where the
// CPU runs two 512-bit FMAs a cycle (Intel's cores) that cost more than F(4x4)'s fewer
// multiply-adds save: ResNet50's 256-channel layers took 0.8 ms more than in F(2x2) on an Ice
// Lake server. Where it runs 512-bit operations in two 256-bit halves (AMD's Zen 4: half the
// FMA rate, the same memory) F(4x4) saved 0.68 ms on those layers (1 thread; 0.56 on 2).
constexpr int64_t kWinogradF4MaxChannelProduct = 128 * 128;
constexpr int64_t kWinogradF4MaxChannelProductHalfRate = 256 * 256;
// By this CPU (cpu_capabilities.h's avx512_in_halves): one of the two above.
int64_t winograd_f4_max_channel_product();
int winograd_nhwc_tile(const NhwcConv& p);

// U for the positions, each packed as panel_product's B [C, M], in one allocation.
struct WinogradNhwcWeights {
  int m = 2;              // the output tile
  std::vector<PanelB> u;  // (m + 2)^2, sharing one storage
};
std::shared_ptr<const WinogradNhwcWeights> pack_winograd_nhwc_weights(const float* w, int64_t M,
                                                                      int64_t C, int m);

struct WinogradNhwcConv {
  NhwcConv p;
  std::shared_ptr<const WinogradNhwcWeights> w;
  bool clamp = false;  // a Relu (lo 0, hi infinity) or Clip
  float lo = 0, hi = 0;
};

// Tiles per block: V and M of a block together take about as many bytes as U (so that a small
// U and the block stay in L2 together), at least kWinogradNhwcMinTiles, all of them where U is
// large (each block reads U once), but never more than kWinogradNhwcMaxBlockBytes of V and M
// (the calling thread's scratch; ResNet50's blocks take 1.6-1.8 MiB). Blocks are balanced.
constexpr int64_t kWinogradNhwcMinTiles = 32;
constexpr int64_t kWinogradNhwcMaxBlockBytes = int64_t{8} << 20;
int64_t winograd_nhwc_block_tiles(const NhwcConv& p, int m);

// Runs it: x is [N, H, W, C], y is [N, OH, OW, M], holding Z already when p.has_z; bias is [M]
// or null. Up to `threads` OpenMP threads split the transforms by tiles and the products by
// position.
void run_winograd_nhwc(const WinogradNhwcConv& c, const float* x, const float* bias, float* y,
                       int threads);

}  // namespace osprey::cpu
