// Our Winograd F(2x2, 3x3) and F(4x4, 3x3) forms (kernels/cpu/conv_winograd_nhwc.h): the kernel
// with each output tile against the reference FusedConv on the shapes it fits (pads on every side
// or none, odd outputs and outputs smaller than a tile, batches, several blocks of tiles, bias,
// residual Z, Relu and Clip; one and two threads); behind FusedConv's winograd attribute, the
// tile each node takes, where kAuto takes the form (64 channels in and out or more), where it is
// not taken (stride, dilation, channels off a multiple of 16, another kernel size, no winograd
// attribute, the attribute's auto on too few channels, NCHW, computed weights, an activation it
// does not apply, policy kNever), a new input shape after the session released the plain
// weights (in the form, or out of it when the first shape was not), and the size of its blocks
// of tiles.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/conv_winograd_nhwc.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;
using Case = NhwcConvCase;

Attrs winograd(Attrs a, int64_t mode = 2) {
  a["winograd"] = int_attr(mode);
  return a;
}

struct KernelCase {
  const char* name;
  Shape x;  // [N, H, W, C]
  int64_t M;
  int64_t pads[4];  // top, left, bottom, right
  bool bias, residual;
  const char* act;  // "", "Relu" or "Clip" (-0.5, 0.75)
};

// run_winograd_nhwc with the weights transformed for tile m, on `threads`, against the reference
// FusedConv on the same data.
void expect_kernel_matches_reference(const KernelCase& k, int m, int threads) {
  SCOPED_TRACE(std::string(k.name) + " F(" + std::to_string(m) + "x" + std::to_string(m) +
               ") on " + std::to_string(threads) + " thread(s)");
  const int64_t N = k.x[0], H = k.x[1], W = k.x[2], C = k.x[3];
  Attrs attrs = channels_last({{"pads", ints_attr({k.pads[0], k.pads[1], k.pads[2], k.pads[3]})}});
  const std::string act = k.act;
  if (!act.empty()) attrs["activation"] = string_attr(act);
  if (act == "Clip") attrs["activation_params"] = floats_attr({-0.5f, 0.75f});
  const Tensor x = random_tensor(k.x, 1), w = random_tensor({k.M, C, 3, 3}, 2), b = random_tensor({k.M}, 3);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto shape_run = ref.run({x, w, k.bias ? b : Tensor()});
  ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
  const Tensor z = k.residual ? random_tensor(shape_run->shape(), 4) : Tensor();
  auto want = ref.run({x, w, k.bias ? b : Tensor(), z});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  cpu::NhwcConv p;
  p.N = N, p.C = C, p.H = H, p.W = W, p.M = k.M, p.KH = p.KW = 3;
  p.OH = want->dim(1), p.OW = want->dim(2), p.pad_top = k.pads[0], p.pad_left = k.pads[1];
  p.has_bias = k.bias, p.has_z = k.residual;
  cpu::WinogradNhwcConv c;
  c.p = p;
  c.w = cpu::pack_winograd_nhwc_weights(w.data<float>(), k.M, C, m);
  c.clamp = !act.empty();
  c.lo = act == "Clip" ? -0.5f : 0.0f;
  c.hi = act == "Clip" ? 0.75f : INFINITY;
  Tensor y(DType::kFloat32, want->shape());
  if (k.residual) std::memcpy(y.raw_data(), z.raw_data(), y.nbytes());
  cpu::run_winograd_nhwc(c, x.data<float>(), k.bias ? b.data<float>() : nullptr, y.data<float>(), threads);
  expect_close(y, *want);
}

TEST(CpuConvWinogradNhwc, KernelMatchesReferenceWithEitherTile) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  const std::vector<KernelCase> cases = {
      // Odd sizes: the last tiles are cut in both directions.
      {"odd_13x9_batch2_residual_clip", {2, 13, 9, 32}, 48, {1, 1, 1, 1}, false, true, "Clip"},
      {"asymmetric_pads_bias_residual", {1, 11, 10, 16}, 16, {0, 1, 2, 0}, true, true, ""},
      {"no_pads_7x8_to_5x6", {1, 7, 8, 16}, 32, {0, 0, 0, 0}, true, false, ""},
      {"one_output_pixel", {1, 3, 3, 16}, 16, {0, 0, 0, 0}, true, false, "Relu"},
      // More tiles than one block holds (kWinogradNhwcMinTiles) with either tile.
      {"several_blocks_of_tiles", {1, 40, 36, 16}, 16, {1, 1, 1, 1}, true, true, "Relu"},
      {"64_channels_14x14", {1, 14, 14, 64}, 64, {1, 1, 1, 1}, true, false, "Relu"},
  };
  for (const auto& k : cases)
    for (int m : {2, 4})
      for (int threads : {1, 2}) expect_kernel_matches_reference(k, m, threads);
}

// Through FusedConv: F(4x4) up to the CPU's channel product, F(2x2) above, both matching the
// reference on no pool and a pool of 2.
TEST(CpuConvWinogradNhwc, NodesTakeTheTileForTheirChannels) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::WinogradNhwcPolicyScope always(TapPolicy::kAlways);
  const Attrs relu = winograd({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}});
  std::vector<std::pair<Case, bool>> cases = {
      {{"16_to_16", {1, 9, 9, 16}, {16, 16, 3, 3}, relu, true, true}, true},
      {{"128_to_128", {1, 7, 6, 128}, {128, 128, 3, 3}, relu, true, false}, true},
      {{"272_to_256", {1, 7, 6, 272}, {256, 272, 3, 3}, relu, false, true}, false},
  };
  // 256 x 256: F(4x4) where the CPU runs 512-bit FMAs in halves, F(2x2) elsewhere.
  const bool halves = cpu::winograd_f4_max_channel_product() == cpu::kWinogradF4MaxChannelProductHalfRate;
  cases.push_back({{"256_to_256", {1, 7, 6, 256}, {256, 256, 3, 3}, relu, true, false}, halves});
  for (const auto& [c, f4] : cases) {
    const int64_t before = cpu::winograd_nhwc_f4_convolutions_run();
    expect_form_matches_reference(c, cpu::winograd_nhwc_convolutions_run);
    EXPECT_EQ(cpu::winograd_nhwc_f4_convolutions_run() - before, f4 ? 2 : 0) << c.name;
  }
}

// kAuto takes ResNet50's 64- to 256-channel layers and leaves fewer channels to oneDNN.
TEST(CpuConvWinogradNhwc, AutoTakesItFromSixtyFourChannels) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::WinogradNhwcPolicyScope automatic(TapPolicy::kAuto);
  const Attrs relu = winograd({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}}, 1);
  expect_form_matches_reference({"14x14_64_to_64", {1, 14, 14, 64}, {64, 64, 3, 3}, relu, true, false},
                                cpu::winograd_nhwc_convolutions_run);
  // A 7x7 output: taken where 512-bit FMAs run in halves (from 7x7 there), else left to oneDNN.
  EXPECT_EQ(cpu::winograd_min_pixels(),
            cpu::avx512_in_halves() ? cpu::kWinogradMinPixelsHalfRate : cpu::kWinogradMinPixels);
  if (cpu::avx512_in_halves()) {
    expect_form_matches_reference({"7x7_64_to_64", {1, 7, 7, 64}, {64, 64, 3, 3}, relu, true, false},
                                  cpu::winograd_nhwc_convolutions_run);
  } else {
    expect_form_not_taken({{"7x7_64_to_64", {1, 7, 7, 64}, {64, 64, 3, 3}, channels_last(relu), true}},
                          cpu::winograd_nhwc_convolutions_run);
  }
  const Attrs on = winograd({{"pads", ints_attr({1, 1, 1, 1})}});
  expect_form_not_taken({{"14x14_48_to_64", {1, 14, 14, 48}, {64, 48, 3, 3}, channels_last(on), true},
                         {"14x14_64_to_48", {1, 14, 14, 64}, {48, 64, 3, 3}, channels_last(on), true}},
                        cpu::winograd_nhwc_convolutions_run);
}

TEST(CpuConvWinogradNhwc, NotTakenWhereItDoesNotFitOrIsNotAsked) {
  cpu::WinogradNhwcPolicyScope always(TapPolicy::kAlways);
  const Attrs pad1 = {{"pads", ints_attr({1, 1, 1, 1})}};
  Attrs stride2 = pad1, dilated = {{"pads", ints_attr({2, 2, 2, 2})}}, sigmoid = pad1;
  stride2["strides"] = ints_attr({2, 2});
  dilated["dilations"] = ints_attr({2, 2});
  sigmoid["activation"] = string_attr("Sigmoid");
  expect_form_not_taken(
      {
          {"stride2", {1, 12, 12, 64}, {64, 64, 3, 3}, channels_last(winograd(stride2)), true},
          {"dilated", {1, 12, 12, 64}, {64, 64, 3, 3}, channels_last(winograd(dilated)), true},
          {"channels_off_16", {1, 9, 9, 24}, {32, 24, 3, 3}, channels_last(winograd(pad1)), true},
          {"outputs_off_16", {1, 9, 9, 32}, {40, 32, 3, 3}, channels_last(winograd(pad1)), true},
          {"5x5_kernel", {1, 9, 9, 16}, {16, 16, 5, 5},
           channels_last(winograd({{"pads", ints_attr({2, 2, 2, 2})}})), true},
          {"no_winograd_attribute", {1, 14, 14, 64}, {64, 64, 3, 3}, channels_last(pad1), true},
          {"auto_too_few_channels", {1, 14, 14, 32}, {32, 32, 3, 3}, channels_last(winograd(pad1, 1)),
           true},
          {"nchw", {1, 16, 9, 9}, {16, 16, 3, 3}, winograd(pad1), true},
          {"computed_weights", {1, 9, 9, 16}, {16, 16, 3, 3}, channels_last(winograd(pad1)), false},
          {"sigmoid", {1, 9, 9, 16}, {16, 16, 3, 3}, channels_last(winograd(sigmoid)), true},
      },
      cpu::winograd_nhwc_convolutions_run);
}

TEST(CpuConvWinogradNhwc, PolicyNeverLeavesItToOneDnn) {
  cpu::WinogradNhwcPolicyScope never(TapPolicy::kNever);
  const Attrs a = channels_last(winograd({{"pads", ints_attr({1, 1, 1, 1})}}));
  expect_form_not_taken({{"never", {1, 14, 14, 64}, {64, 64, 3, 3}, a, true}},
                        cpu::winograd_nhwc_convolutions_run);
}

// The transformed weights serve every input shape: after the session releases the plain ones,
// a new shape still runs in the form.
TEST(CpuConvWinogradNhwc, NewShapeAfterTheWeightsWereReleased) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::WinogradNhwcPolicyScope always(TapPolicy::kAlways);
  const Attrs attrs = channels_last(winograd({{"pads", ints_attr({1, 1, 1, 1})}}));
  const auto [first, second] = runs_around_a_release(
      attrs, random_tensor({32, 16, 3, 3}, 5), random_tensor({32}, 6), random_tensor({1, 8, 8, 16}, 7),
      random_tensor({2, 11, 6, 16}, 8), cpu::winograd_nhwc_convolutions_run);
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 1);
}

// Auto leaves a first image too small for Winograd (6x6, under either CPU's rule) to oneDNN's
// direct primitive; once the session has released the plain weights, a larger image cannot be
// transformed and runs on the packed ones, still matching the reference.
TEST(CpuConvWinogradNhwc, LargerShapeAfterTheWeightsWereReleasedStaysOnThePackedOnes) {
  cpu::WinogradNhwcPolicyScope automatic(TapPolicy::kAuto);
  const Attrs attrs = channels_last(winograd({{"pads", ints_attr({1, 1, 1, 1})}}, 1));
  const auto [first, second] = runs_around_a_release(
      attrs, random_tensor({64, 64, 3, 3}, 5), random_tensor({64}, 6), random_tensor({1, 6, 6, 64}, 7),
      random_tensor({1, 14, 14, 64}, 8), cpu::winograd_nhwc_convolutions_run);
  EXPECT_EQ(first, 0);
  EXPECT_EQ(second, 0);
}

TEST(CpuConvWinogradNhwc, BlocksOfTilesFollowTheWeightsSize) {
  const auto block = [](int64_t N, int64_t H, int64_t C, int64_t M, int m) {
    cpu::NhwcConv p;
    p.N = N, p.H = p.W = p.OH = p.OW = H, p.C = C, p.M = M, p.KH = p.KW = 3;
    return cpu::winograd_nhwc_block_tiles(p, m);
  };
  // ResNet50's 14x14 layers with F(2x2) (U 4 MiB): all 49 tiles in one block; at batch 8, 392
  // tiles in 4 blocks of 98 (U's 16 x 256 x 256 floats over 16 x 512 per tile: at most 128).
  EXPECT_EQ(block(1, 14, 256, 256, 2), 49);
  EXPECT_EQ(block(8, 14, 256, 256, 2), 98);
  // 56x56 with 64 channels: F(2x2), 784 tiles in blocks of at most 32; F(4x4), 196 tiles in
  // 7 blocks of 28.
  EXPECT_EQ(block(1, 56, 64, 64, 2), 32);
  EXPECT_EQ(block(1, 56, 64, 64, 4), 28);
  // 28x28 with 128 channels: F(2x2), 196 tiles, at most 64 a block, balanced: 4 blocks of 49;
  // F(4x4), all 49 tiles (at most 64).
  EXPECT_EQ(block(1, 28, 128, 128, 2), 49);
  EXPECT_EQ(block(1, 28, 128, 128, 4), 49);
  // 2048 channels in and out (U 256 MiB with F(2x2)): blocks capped at 8 MiB of V and M, 32
  // tiles of 16 x 4096 floats; 64 x 64 = 4096 tiles in 128 blocks of 32.
  EXPECT_EQ(block(1, 128, 2048, 2048, 2), 32);
  // The tile: F(4x4) up to 128 x 128 channels everywhere, up to 256 x 256 where the CPU runs
  // 512-bit FMAs in halves; F(2x2) above the CPU's limit.
  const int64_t limit = cpu::winograd_f4_max_channel_product();
  EXPECT_EQ(limit, cpu::avx512_in_halves() ? cpu::kWinogradF4MaxChannelProductHalfRate
                                           : cpu::kWinogradF4MaxChannelProduct);
  cpu::NhwcConv p;
  p.C = 128, p.M = 128;
  EXPECT_EQ(cpu::winograd_nhwc_tile(p), 4);
  p.C = limit / 128;
  EXPECT_EQ(cpu::winograd_nhwc_tile(p), 4);
  p.C += 16;
  EXPECT_EQ(cpu::winograd_nhwc_tile(p), 2);
}

}  // namespace
}  // namespace osprey::testing
