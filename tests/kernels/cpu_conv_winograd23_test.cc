// Our Winograd F(2x2, 3x3) form (kernels/cpu/conv_winograd23.h) behind FusedConv's winograd
// attribute: against the reference FusedConv on the shapes it fits (pads on every side or none,
// odd and one-pixel outputs, batches, several blocks of tiles, bias, residual Z, Relu and Clip;
// one and two threads), where kAuto takes it (128 channels in and out or more), where it is not
// taken (stride, dilation, channels off a multiple of 16, another kernel size, no winograd
// attribute, the attribute's auto on too few channels, NCHW, computed weights, an activation it
// does not apply, policy kNever), a new input shape after the session released the plain
// weights, and the size of its blocks of tiles.
#include <gtest/gtest.h>

#include <vector>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_winograd23.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;
using Case = NhwcConvCase;

Attrs winograd(Attrs a, int64_t mode = 2) {
  a["winograd"] = int_attr(mode);
  return a;
}

TEST(CpuConvWinograd23, MatchesReferenceOnEveryShapeItFits) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::Winograd23PolicyScope always(TapPolicy::kAlways);
  const std::vector<Case> cases = {
      {"winograd_auto_14x14_64_to_64_bias_relu", {1, 14, 14, 64}, {64, 64, 3, 3},
       winograd({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}}, 1),
       true, false},
      // Odd sizes: the last tile row and column have one output pixel.
      {"odd_13x9_batch2_residual_clip", {2, 13, 9, 32}, {48, 32, 3, 3},
       winograd({{"pads", ints_attr({1, 1, 1, 1})},
                 {"activation", string_attr("Clip")},
                 {"activation_params", floats_attr({-0.5f, 0.75f})}}),
       false, true},
      {"asymmetric_pads_bias_residual", {1, 11, 10, 16}, {16, 16, 3, 3},
       winograd({{"pads", ints_attr({0, 1, 2, 0})}}), true, true},
      {"no_pads_7x8_to_5x6", {1, 7, 8, 16}, {32, 16, 3, 3}, winograd({}), true, false},
      {"one_output_pixel", {1, 3, 3, 16}, {16, 16, 3, 3}, winograd({}), true, false},
      // 10 x 9 tiles of 16 channels in: blocks of kWinograd23MinTiles tiles.
      {"several_blocks_of_tiles", {1, 20, 18, 16}, {16, 16, 3, 3},
       winograd({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}}), true,
       true},
  };
  for (const auto& c : cases) expect_form_matches_reference(c, cpu::winograd23_convolutions_run);
}

// kAuto takes ResNet50's 128- and 256-channel layers and leaves the 64-channel ones to oneDNN.
TEST(CpuConvWinograd23, AutoTakesItFromOneHundredTwentyEightChannels) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::Winograd23PolicyScope automatic(TapPolicy::kAuto);
  const Attrs relu = winograd({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}}, 1);
  expect_form_matches_reference({"14x14_128_to_128", {1, 14, 14, 128}, {128, 128, 3, 3}, relu, true, false},
                                cpu::winograd23_convolutions_run);
  expect_form_not_taken({{"14x14_64_to_128", {1, 14, 14, 64}, {128, 64, 3, 3}, channels_last(relu), true},
                         {"14x14_128_to_64", {1, 14, 14, 128}, {64, 128, 3, 3}, channels_last(relu), true}},
                        cpu::winograd23_convolutions_run);
}

TEST(CpuConvWinograd23, NotTakenWhereItDoesNotFitOrIsNotAsked) {
  cpu::Winograd23PolicyScope always(TapPolicy::kAlways);
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
      cpu::winograd23_convolutions_run);
}

TEST(CpuConvWinograd23, PolicyNeverLeavesItToOneDnn) {
  cpu::Winograd23PolicyScope never(TapPolicy::kNever);
  const Attrs a = channels_last(winograd({{"pads", ints_attr({1, 1, 1, 1})}}));
  expect_form_not_taken({{"never", {1, 14, 14, 64}, {64, 64, 3, 3}, a, true}},
                        cpu::winograd23_convolutions_run);
}

// The transformed weights serve every input shape: after the session releases the plain ones,
// a new shape still runs in the form.
TEST(CpuConvWinograd23, NewShapeAfterTheWeightsWereReleased) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "the form needs AVX-512";
  cpu::Winograd23PolicyScope always(TapPolicy::kAlways);
  const Attrs attrs = channels_last(winograd({{"pads", ints_attr({1, 1, 1, 1})}}));
  const Tensor w = random_tensor({32, 16, 3, 3}, 5), b = random_tensor({32}, 6);
  const Tensor small = random_tensor({1, 8, 8, 16}, 7), other = random_tensor({2, 11, 6, 16}, 8);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto want_small = ref.run({small, w, b});
  auto want_other = ref.run({other, w, b});
  ASSERT_TRUE(want_small.ok() && want_other.ok());
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  const int64_t before = cpu::winograd23_convolutions_run();
  auto got_small = fast.run({small, w, b});
  ASSERT_TRUE(got_small.ok()) << got_small.status().to_string();
  expect_close(*got_small, *want_small);
  ASSERT_NE(fast.state(), nullptr);
  ASSERT_TRUE(fast.state()->holds_constant(1));
  fast.state()->constant_released(1);
  const Tensor released = Tensor::wrap(DType::kFloat32, w.shape(), nullptr, nullptr);
  auto got_other = fast.run({other, released, b});
  ASSERT_TRUE(got_other.ok()) << got_other.status().to_string();
  expect_close(*got_other, *want_other);
  EXPECT_EQ(cpu::winograd23_convolutions_run() - before, 2);
}

TEST(CpuConvWinograd23, BlocksOfTilesFollowTheWeightsSize) {
  const auto block = [](int64_t N, int64_t H, int64_t C, int64_t M) {
    cpu::NhwcConv p;
    p.N = N, p.H = p.W = p.OH = p.OW = H, p.C = C, p.M = M, p.KH = p.KW = 3;
    return cpu::winograd23_block_tiles(p);
  };
  // ResNet50's 14x14 layers (U 4 MiB): all 49 tiles in one block; at batch 8, 392 tiles in 4
  // blocks of 98 (U's 16 x 256 x 256 floats over 16 x 512 per tile: at most 128).
  EXPECT_EQ(block(1, 14, 256, 256), 49);
  EXPECT_EQ(block(8, 14, 256, 256), 98);
  // 56x56 with 64 channels (U 256 KiB): 784 tiles in blocks of at most 32.
  EXPECT_EQ(block(1, 56, 64, 64), 32);
  // 28x28 with 128 channels: 196 tiles, at most 64 a block, balanced: 4 blocks of 49.
  EXPECT_EQ(block(1, 28, 128, 128), 49);
}

}  // namespace
}  // namespace osprey::testing
