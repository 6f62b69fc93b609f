// The product form of channels-last convolutions (kernels/cpu/conv_product.h): copied taps times
// the weights packed for panel_product, checked against the reference FusedConv on the shapes
// the tap and tile forms share (padding on every side, strides, SAME_UPPER, dilations, batches,
// bias, residual Z, Relu and Clip) and on its own pieces (a 1x1 that reads X as it is, a
// strided 1x1, more pixels than one block of copied taps, output channels off the 48-column
// panel), on one and two threads; where kAuto takes it (few pixels and large weights, or a
// narrowing 1x1 to a channel count off a multiple of 32); and where it must not be taken.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_product.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;
using Case = NhwcConvCase;

std::vector<Case> cases() {
  std::vector<Case> c = shared_nhwc_conv_cases();
  const std::vector<Case> own = {
      {"1x1_as_is_residual_relu_100_out", {2, 7, 7, 40}, {100, 40, 1, 1},
       {{"activation", string_attr("Relu")}}, true, true},
      {"1x1_stride2_no_bias", {1, 14, 14, 24}, {64, 24, 1, 1}, {{"strides", ints_attr({2, 2})}},
       false, false},
      {"3x3_more_pixels_than_a_block", {2, 16, 16, 8}, {20, 8, 3, 3},
       {{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Clip")},
        {"activation_params", floats_attr({-0.25f, 0.75f})}},
       true, true},
      // An image stem: kernel rows copied in one run each, cut by the padding on both sides,
      // over several blocks of pixels.
      {"stem_7x7_stride2_3_channels", {1, 96, 96, 3}, {20, 3, 7, 7},
       {{"strides", ints_attr({2, 2})}, {"pads", ints_attr({3, 3, 2, 2})},
        {"activation", string_attr("Relu")}},
       true, false},
  };
  c.insert(c.end(), own.begin(), own.end());
  return c;
}

TEST(CpuConvProduct, MatchesReferenceOnEveryPiece) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "panel_product needs AVX-512";
  cpu::ProductPolicyScope always(TapPolicy::kAlways);
  for (const auto& c : cases()) expect_form_matches_reference(c, cpu::product_convolutions_run);
}

TEST(CpuConvProduct, AutoTakesItForFewPixelsAndLargeWeightsAndNarrowingPointwiseOffThirtyTwo) {
  cpu::ProductPolicyScope automatic(TapPolicy::kAuto);
  struct Shape2 {
    const char* name;
    Shape x, w;
    bool expected;  // with AVX-512
  };
  const std::vector<Shape2> shapes = {
      {"7x7_image_2_mb_of_weights", {1, 7, 7, 256}, {256, 256, 3, 3}, true},
      {"7x7_image_1x1_512_kb", {1, 7, 7, 256}, {512, 256, 1, 1}, true},
      {"7x7_image_small_weights", {1, 7, 7, 64}, {64, 64, 3, 3}, false},
      {"9x9_image", {1, 9, 9, 256}, {256, 256, 3, 3}, false},
      // Narrowing pointwise convolutions to a channel count off a multiple of 32.
      {"1x1_144_to_24", {1, 20, 20, 144}, {24, 144, 1, 1}, true},
      {"1x1_64_to_40", {1, 12, 12, 64}, {40, 64, 1, 1}, true},
      {"1x1_480_to_80", {1, 14, 14, 480}, {80, 480, 1, 1}, true},
      {"1x1_144_to_32", {1, 20, 20, 144}, {32, 144, 1, 1}, false},  // a multiple of 32
      {"1x1_384_to_64", {1, 14, 14, 384}, {64, 384, 1, 1}, false},  // a multiple of 32
      {"1x1_48_to_24", {1, 20, 20, 48}, {24, 48, 1, 1}, true},
      {"1x1_32_to_16", {1, 12, 12, 32}, {16, 32, 1, 1}, true},
      {"1x1_24_to_16", {1, 20, 20, 24}, {16, 24, 1, 1}, false},     // under 32 input channels
      {"1x1_24_to_40", {1, 20, 20, 24}, {40, 24, 1, 1}, false},     // widening
  };
  for (const auto& s : shapes) {
    SCOPED_TRACE(s.name);
    const bool same = s.w[2] == 3;
    const Attrs a = channels_last(same ? Attrs{{"pads", ints_attr({1, 1, 1, 1})}} : Attrs{});
    const Tensor x = random_tensor(s.x, 5), w = random_tensor(s.w, 6);
    NodeRunner fast("FusedConv", "com.osprey", 1, a, Device::cpu, {Tensor(), w});
    NodeRunner ref("FusedConv", "com.osprey", 1, a, Device::ref);
    const int64_t before = cpu::product_convolutions_run();
    auto got = fast.run({x, w});
    auto want = ref.run({x, w});
    ASSERT_TRUE(got.ok() && want.ok());
    const bool expected = s.expected && cpu::panel_product_supported();
    EXPECT_EQ(cpu::product_convolutions_run(), before + (expected ? 1 : 0));
    expect_close(*got, *want);
  }
}

TEST(CpuConvProduct, NotUsedWhereItDoesNotApply) {
  // Grouped, NCHW, computed weights and activations it does not apply (Sigmoid) take the other
  // forms even with kAlways.
  cpu::ProductPolicyScope always(TapPolicy::kAlways);
  expect_form_not_taken(
      {
          {"grouped", {1, 6, 6, 32}, {32, 8, 3, 3}, channels_last({{"group", int_attr(4)}}), true},
          {"nchw", {1, 32, 6, 6}, {4, 32, 3, 3}, {}, true},
          {"computed_weights", {1, 6, 6, 32}, {4, 32, 3, 3}, channels_last({}), false},
          {"sigmoid", {1, 6, 6, 32}, {4, 32, 3, 3},
           channels_last({{"activation", string_attr("Sigmoid")}}), true},
      },
      cpu::product_convolutions_run);
}

}  // namespace
}  // namespace osprey::testing
