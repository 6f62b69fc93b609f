// FusedConv with channels_blocked = 8 (or 16): X, Z and Y are [N, C/b, H, W, b], the layout the
// channels_blocked pass gives ResNet-like regions. Checked: the reference (the oracle) against
// the plain NCHW convolution; the fast kernel's direct and tap forms against the reference on
// shapes with padding, strides, dilations, residuals, activations and batches, on 1 and 2
// threads; the fallback to the direct form, from the tap rows, for an image too large for the
// tap form after the plain weights were released; and the errors for malformed inputs.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_taps.h"

namespace osprey::testing {
namespace {

using cpu::TapPolicy;
using PolicyScope = cpu::TapPolicyScope;

Attrs blocked(Attrs a, int64_t b = 8) {
  a["channels_blocked"] = int_attr(b);
  return a;
}

// [N, C/b, H, W, b] -> [N, C, H, W], written out element by element.
Tensor to_nchw(const Tensor& t) {
  const int64_t N = t.dim(0), CB = t.dim(1), H = t.dim(2), W = t.dim(3), b = t.dim(4);
  Tensor out(DType::kFloat32, {N, CB * b, H, W});
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < CB * b; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x)
          out.data<float>()[((n * CB * b + c) * H + y) * W + x] =
              t.data<float>()[(((n * CB + c / b) * H + y) * W + x) * b + c % b];
  return out;
}

struct Case {
  const char* name;
  Shape x;  // blocked: [N, C/b, H, W, b]
  Shape w;  // [M, C, KH, KW]
  Attrs attrs;
  bool bias, residual;
};

std::vector<Case> cases() {
  return {
      {"1x1_residual_relu", {1, 2, 5, 6, 8}, {24, 16, 1, 1}, {{"activation", string_attr("Relu")}}, true, true},
      {"3x3_pad1_relu_batch2",
       {2, 2, 9, 9, 8},
       {24, 16, 3, 3},
       {{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}},
       true,
       false},
      {"3x3_stride2_asymmetric_pads_residual_clip",
       {1, 3, 11, 10, 8},
       {16, 24, 3, 3},
       {{"strides", ints_attr({2, 2})},
        {"pads", ints_attr({1, 0, 0, 1})},
        {"activation", string_attr("Clip")},
        {"activation_params", floats_attr({-0.5f, 0.5f})}},
       true,
       true},
      {"5x3_dilated_no_bias",
       {1, 1, 13, 12, 8},
       {8, 8, 5, 3},
       {{"dilations", ints_attr({2, 3})}, {"pads", ints_attr({2, 3, 4, 1})}},
       false,
       false},
      {"same_upper_stride_3x2_residual",
       {1, 2, 10, 14, 8},
       {8, 16, 3, 3},
       {{"auto_pad", string_attr("SAME_UPPER")}, {"strides", ints_attr({3, 2})}},
       false,
       true},
  };
}

TEST(CpuConvBlocked, ReferenceIsThePlainConvolution) {
  const Case c = cases()[2];
  const Tensor x = random_tensor(c.x, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
  NodeRunner ref_blocked("FusedConv", "com.osprey", 1, blocked(c.attrs), Device::ref);
  NodeRunner ref_plain("FusedConv", "com.osprey", 1, c.attrs, Device::ref);
  auto shape_run = ref_blocked.run({x, w, b});
  ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
  ASSERT_EQ(shape_run->shape(), (Shape{1, 2, 5, 5, 8}));
  const Tensor z = random_tensor(shape_run->shape(), 4);
  auto got = ref_blocked.run({x, w, b, z});
  auto want = ref_plain.run({to_nchw(x), w, b, to_nchw(z)});
  ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string() << want.status().to_string();
  expect_close(to_nchw(*got), *want, 1e-6);
}

TEST(CpuConvBlocked, DirectAndTapFormsMatchTheReference) {
  ThreadPool pool2(2);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const Attrs attrs = blocked(c.attrs);
    const Tensor x = random_tensor(c.x, 5), w = random_tensor(c.w, 6), b = random_tensor({c.w[0]}, 7);
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    auto shape_run = ref.run({x, w, c.bias ? b : Tensor()});
    ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
    const Tensor z = c.residual ? random_tensor(shape_run->shape(), 8) : Tensor();
    const std::vector<Tensor> in = {x, w, c.bias ? b : Tensor(), z};
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    const bool has_taps = c.w[2] * c.w[3] > 1;
    for (const TapPolicy policy : {TapPolicy::kNever, TapPolicy::kAlways}) {
      PolicyScope scope(policy);
      NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
      ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        const int64_t before = cpu::tap_convolutions_run();
        auto got = fast.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        const bool taps = policy == TapPolicy::kAlways && has_taps;
        EXPECT_EQ(cpu::tap_convolutions_run(), before + (taps ? 1 : 0));
        expect_close(*got, *want);
      }
    }
  }
}

TEST(CpuConvBlocked, BlocksOfSixteen) {
  const Attrs attrs = blocked({{"pads", ints_attr({1, 1, 1, 1})}}, 16);
  const Tensor x = random_tensor({2, 2, 6, 7, 16}, 9), w = random_tensor({16, 32, 3, 3}, 10);
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({x, w});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (const TapPolicy policy : {TapPolicy::kNever, TapPolicy::kAlways}) {
    PolicyScope scope(policy);
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    auto got = fast.run({x, w});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(*got, *want);
  }
}

TEST(CpuConvBlocked, ImageTooLargeForTheTapFormRunsDirectlyFromTheRows) {
  // 60 x 60 pixels x 3 taps x 128 channels is 5.3 MiB, over kTapBlockBytes: that size runs
  // directly, even though a first 7x7 image chose the tap form and the plain weights were then
  // released (the tap rows are all that holds them).
  const Attrs attrs = blocked({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}});
  const Tensor w = random_tensor({8, 128, 3, 3}, 11), b = random_tensor({8}, 12);
  const Tensor small = random_tensor({1, 16, 7, 7, 8}, 13), large = random_tensor({1, 16, 60, 60, 8}, 14);
  Tensor want_small, want_large;
  {
    PolicyScope never(TapPolicy::kNever);
    NodeRunner direct("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    auto s = direct.run({small, w, b});
    auto l = direct.run({large, w, b});
    ASSERT_TRUE(s.ok() && l.ok());
    want_small = *s;
    want_large = *l;
  }
  PolicyScope always(TapPolicy::kAlways);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  int64_t before = cpu::tap_convolutions_run();
  auto got_small = fast.run({small, w, b});
  ASSERT_TRUE(got_small.ok()) << got_small.status().to_string();
  EXPECT_EQ(cpu::tap_convolutions_run(), before + 1);
  expect_close(*got_small, want_small, 1e-5);
  ASSERT_NE(fast.state(), nullptr);
  ASSERT_TRUE(fast.state()->holds_constant(1));
  fast.state()->constant_released(1);
  const Tensor released = Tensor::wrap(DType::kFloat32, w.shape(), nullptr, nullptr);
  before = cpu::tap_convolutions_run();
  auto got_large = fast.run({large, released, b});
  ASSERT_TRUE(got_large.ok()) << got_large.status().to_string();
  EXPECT_EQ(cpu::tap_convolutions_run(), before);
  expect_close(*got_large, want_large, 1e-5);
}

TEST(CpuConvBlocked, MalformedInputsAreErrors) {
  const Tensor w = random_tensor({8, 16, 3, 3}, 15);
  struct Bad {
    const char* name;
    Attrs attrs;
    Shape x, w;
    const char* says;
  };
  const std::vector<Bad> bad = {
      {"last_dim_not_the_block", blocked({}), {1, 4, 5, 5, 4}, {8, 16, 3, 3}, "channels_blocked = 8"},
      {"rank_4_input", blocked({}), {1, 16, 5, 5}, {8, 16, 3, 3}, "channels_blocked = 8"},
      {"output_channels_not_a_multiple", blocked({}), {1, 2, 5, 5, 8}, {12, 16, 3, 3}, "multiple of 8"},
      {"both_layouts", blocked({{"channels_last", int_attr(1)}}), {1, 2, 5, 5, 8}, {8, 16, 3, 3}, "both"},
      {"unknown_block", blocked({}, 5), {1, 2, 5, 5, 8}, {8, 16, 3, 3}, "0, 8 or 16"},
      {"channels_do_not_match", blocked({}), {1, 3, 5, 5, 8}, {8, 16, 3, 3}, "do not match"},
  };
  for (const auto& c : bad) {
    SCOPED_TRACE(c.name);
    const Tensor x = random_tensor(c.x, 16), wt = random_tensor(c.w, 17);
    for (const Device d : {Device::cpu, Device::ref}) {
      NodeRunner runner("FusedConv", "com.osprey", 1, c.attrs, d);
      auto got = runner.run({x, wt});
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument) << got.status().to_string();
      if (d == Device::cpu) {
        EXPECT_NE(got.status().message().find(c.says), std::string::npos) << got.status().to_string();
      }
    }
  }
}

}  // namespace
}  // namespace osprey::testing
