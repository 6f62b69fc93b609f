// The tap form of channels-last convolutions (kernels/cpu/conv_taps.h): one 1x1 product per kernel
// row over copied pixels, checked against the reference FusedConv on shapes that reach every
// piece (first / middle / last rows, one-row kernels, padding on every side, strides, dilations,
// several pixel blocks with a shorter tail, batches, bias, residual Z, activations), and against
// the direct form.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/dnnl_common.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;
using PolicyScope = cpu::TapPolicyScope;

int64_t tap_runs() {
  return cpu::tap_convolutions_run();
}

using Case = NhwcConvCase;

// The shared cases, then a one-row kernel (first row = last row) with Sigmoid, and a 2x2
// stride-2 kernel (a first and a last row, no middle one).
std::vector<Case> cases() {
  std::vector<Case> c = shared_nhwc_conv_cases();
  const std::vector<Case> own = {
      {"1x3_one_row_residual_sigmoid",
       {2, 6, 7, 9},
       {5, 9, 1, 3},
       {{"pads", ints_attr({0, 1, 0, 1})}, {"activation", string_attr("Sigmoid")}},
       true,
       true},
      {"2x2_stride2_first_and_last_rows",
       {1, 8, 8, 16},
       {8, 16, 2, 2},
       {{"strides", ints_attr({2, 2})}},
       true,
       false},
  };
  c.insert(c.end(), own.begin(), own.end());
  return c;
}

TEST(CpuConvTaps, MatchesReferenceOnEveryPiece) {
  PolicyScope always(TapPolicy::kAlways);
  for (const auto& c : cases()) expect_form_matches_reference(c, tap_runs);
}

TEST(CpuConvTaps, AgreesWithTheDirectFormAndMutationsAreCaught) {
  const Case c = cases()[0];
  const Attrs attrs = channels_last(c.attrs);
  const Tensor x = random_tensor(c.x_nhwc, 5), w = random_tensor(c.w, 6),
               b = random_tensor({c.w[0]}, 7);
  Tensor direct, taps;
  {
    PolicyScope never(TapPolicy::kNever);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    const int64_t before = tap_runs();
    auto y = fast.run({x, w, b});
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(tap_runs(), before);
    direct = *y;
  }
  {
    PolicyScope always(TapPolicy::kAlways);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    auto y = fast.run({x, w, b});
    ASSERT_TRUE(y.ok());
    taps = *y;
  }
  expect_close(taps, direct, 1e-5);
  // One changed weight (kernel row 2, tap 1) moves the result: the rows are not mixed up.
  Tensor w2 = w.clone();
  w2.data<float>()[2 * 3 + 1] += 0.01f;
  PolicyScope always(TapPolicy::kAlways);
  NodeRunner moved("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w2});
  auto y2 = moved.run({x, w2, b});
  ASSERT_TRUE(y2.ok());
  EXPECT_FALSE(bit_equal(*y2, taps));
}

TEST(CpuConvTaps, TwoPixelBlocksWithATailAgreeWithTheDirectForm) {
  // 3 * 128 * 4 bytes per pixel: 2730 pixels per block, so 3600 pixels are two blocks, the second
  // shorter. (The reference kernel's column buffer would exceed its element limit here; the
  // direct form is checked against the reference in cpu_conv_test.cc.)
  const Attrs attrs =
      channels_last({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}});
  const Tensor x = random_tensor({1, 60, 60, 128}, 12), w = random_tensor({8, 128, 3, 3}, 13),
               b = random_tensor({8}, 14), z = random_tensor({1, 60, 60, 8}, 15);
  Result<Tensor> direct = Tensor(), taps = Tensor();
  {
    PolicyScope never(TapPolicy::kNever);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    direct = fast.run({x, w, b, z});
  }
  PolicyScope always(TapPolicy::kAlways);
  ThreadPool pool2(2);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    const int64_t before = tap_runs();
    taps = fast.run({x, w, b, z}, pool);
    ASSERT_TRUE(direct.ok() && taps.ok());
    EXPECT_EQ(tap_runs(), before + 1);
    expect_close(*taps, *direct, 1e-5);
  }
}

TEST(CpuConvTaps, DecisionIsKeptForLaterShapesAndBatches) {
  // The first run decides; later shapes (other batches and image sizes) keep the form and agree.
  PolicyScope always(TapPolicy::kAlways);
  const Attrs attrs = channels_last({{"pads", ints_attr({1, 1, 1, 1})}});
  const Tensor w = random_tensor({16, 8, 3, 3}, 8);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  for (const Shape& s : std::vector<Shape>{{1, 7, 7, 8}, {3, 7, 7, 8}, {1, 12, 5, 8}}) {
    SCOPED_TRACE(shape_to_string(s));
    const Tensor x = random_tensor(s, 9);
    const int64_t before = tap_runs();
    auto got = fast.run({x, w});
    auto want = ref.run({x, w});
    ASSERT_TRUE(got.ok() && want.ok());
    EXPECT_EQ(tap_runs(), before + 1);
    expect_close(*got, *want);
  }
}

TEST(CpuConvTaps, AutoTakesTheTapFormWhereTheDirectKernelIsAvx2AndChannelsAreMany) {
  PolicyScope automatic(TapPolicy::kAuto);
  const Attrs attrs = channels_last({{"pads", ints_attr({1, 1, 1, 1})}});
  for (const int64_t C : {64, 128}) {
    SCOPED_TRACE(C);
    const Tensor x = random_tensor({1, 7, 7, C}, 16), w = random_tensor({16, C, 3, 3}, 17);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    const int64_t before = tap_runs();
    auto got = fast.run({x, w});
    auto want = ref.run({x, w});
    ASSERT_TRUE(got.ok() && want.ok());
    const bool expected = C >= 128 && direct_impl(C, 7, 16) == "jit:avx2";
    EXPECT_EQ(tap_runs(), before + (expected ? 1 : 0)) << direct_impl(C, 7, 16);
    expect_close(*got, *want);
  }
}

TEST(CpuConvTaps, NotUsedWhereItDoesNotApply) {
  // Grouped, 1x1, NCHW and computed (non-constant) weights run the direct form even with kAlways.
  PolicyScope always(TapPolicy::kAlways);
  expect_form_not_taken(
      {
          {"grouped", {1, 6, 6, 8}, {8, 2, 3, 3}, channels_last({{"group", int_attr(4)}}), true},
          {"pointwise", {1, 6, 6, 8}, {4, 8, 1, 1}, channels_last({}), true},
          {"nchw", {1, 8, 6, 6}, {4, 8, 3, 3}, {}, true},
          {"computed_weights", {1, 6, 6, 8}, {4, 8, 3, 3}, channels_last({}), false},
      },
      tap_runs);
}

}  // namespace
}  // namespace osprey::testing
