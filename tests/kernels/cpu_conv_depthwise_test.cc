// The bf16 depthwise form (conv_depthwise.h) of a channels-last FusedConv in fast mode,
// against the reference FusedConv on the same bfloat16-representable input: kernels 3x3, 5x5,
// 7x7 and non-square, strides 1 and 2, symmetric, asymmetric and no pads, images narrower than
// the kernel, channel counts with a tail below 16, bias or none, every activation the form
// takes, bfloat16 or float32 X and Y, one and two threads. The weights stay float32, so a
// float32 Y differs from the oracle only by summation order, a bfloat16 one by its rounding.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "kernels/cpu/attention_bf16.h"
#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::testing {
namespace {

struct DwCase {
  int64_t N, H, W, C, KH, KW, stride;
  std::vector<int64_t> pads;  // [top, left, bottom, right]
  std::string act;
  std::vector<float> params;
  bool bias, x_bf16, y_bf16;
};

void check_case(const DwCase& c, uint32_t seed) {
  SCOPED_TRACE(str_cat("N=", c.N, " H=", c.H, " W=", c.W, " C=", c.C, " K=", c.KH, "x", c.KW,
                       " s=", c.stride, " pads=", c.pads[0], ",", c.pads[1], ",", c.pads[2], ",",
                       c.pads[3], " act=", c.act, c.bias ? " bias" : "", c.x_bf16 ? " x:bf16" : "",
                       c.y_bf16 ? " y:bf16" : ""));
  Attrs attrs = {{"channels_last", int_attr(1)},
                 {"group", int_attr(c.C)},
                 {"strides", ints_attr({c.stride, c.stride})},
                 {"pads", ints_attr(c.pads)}};
  if (!c.act.empty()) attrs["activation"] = string_attr(c.act);
  if (!c.params.empty()) attrs["activation_params"] = floats_attr(c.params);
  const Tensor x = widened_to_f32(rounded_to_bf16(random_tensor({c.N, c.H, c.W, c.C}, seed)));
  const Tensor w = random_tensor({c.C, 1, c.KH, c.KW}, seed + 1);
  const Tensor b = c.bias ? random_tensor({c.C}, seed + 2) : Tensor();
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({x, w, b});
  ASSERT_TRUE(want.ok()) << want.status().to_string();

  attrs["compute_precision"] = string_attr("bf16");
  attrs["bf16_input"] = int_attr(c.x_bf16 ? 1 : 0);
  attrs["bf16_output"] = int_attr(c.y_bf16 ? 1 : 0);
  static ThreadPool pool2(2);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    const int64_t runs = cpu::depthwise_convolutions_run();
    auto got = fast.run({c.x_bf16 ? rounded_to_bf16(x) : x, w, b}, pool);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_EQ(cpu::depthwise_convolutions_run(), runs + 1) << "the depthwise form did not run";
    ASSERT_EQ(got->dtype(), c.y_bf16 ? DType::kBFloat16 : DType::kFloat32);
    ASSERT_EQ(got->shape(), want->shape());
    expect_close(c.y_bf16 ? widened_to_f32(*got) : *got, *want, c.y_bf16 ? 8e-3 : 2e-5);
  }
}

TEST(CpuConvDepthwise, MatchesTheReferenceOnShapesStridesPadsAndActivations) {
  if (!cpu::attention_bf16_available()) GTEST_SKIP() << "the depthwise form needs avx512_bf16";
  cpu::DepthwisePolicyScope always(cpu::TapPolicy::kAlways);
  const std::vector<DwCase> cases = {
      {1, 9, 13, 32, 3, 3, 1, {1, 1, 1, 1}, "Clip", {0.0f, 6.0f}, true, true, true},
      {1, 9, 13, 32, 3, 3, 2, {1, 1, 1, 1}, "Relu", {}, true, true, true},
      {2, 11, 17, 24, 5, 5, 1, {2, 2, 2, 2}, "", {}, false, true, false},
      {1, 11, 17, 40, 5, 5, 2, {1, 1, 2, 2}, "Clip", {-0.5f, 0.5f}, true, false, true},  // asymmetric
      {1, 7, 7, 144, 7, 7, 1, {3, 3, 3, 3}, "Relu", {}, true, true, true},
      {1, 6, 20, 16, 3, 5, 1, {1, 2, 1, 2}, "", {}, true, false, false},  // non-square kernel
      {1, 5, 2, 8, 5, 5, 1, {2, 2, 2, 2}, "Relu", {}, true, true, true},   // narrower than the kernel
      {1, 1, 30, 48, 1, 3, 1, {0, 1, 0, 1}, "", {}, true, true, true},    // one row, 1x3
      {1, 8, 28, 32, 3, 3, 1, {0, 0, 0, 0}, "Clip", {0.0f, 6.0f}, false, true, true},  // no pads
      {1, 14, 14, 96, 3, 3, 2, {0, 0, 1, 1}, "Clip", {0.0f, 6.0f}, true, true, true},  // SAME_UPPER-like
      // Wide enough for whole tiles between the edges at stride 2 too.
      {1, 5, 40, 16, 3, 3, 2, {1, 1, 1, 1}, "Relu", {}, true, true, true},
      {1, 9, 45, 32, 5, 5, 2, {2, 2, 2, 2}, "", {}, true, true, false},
      {1, 9, 50, 16, 7, 7, 2, {3, 3, 3, 3}, "Clip", {0.0f, 6.0f}, false, false, true},
  };
  uint32_t seed = 300;
  for (const auto& c : cases) {
    check_case(c, seed);
    seed += 3;
  }
}

TEST(CpuConvDepthwise, PolicyNeverLeavesTheNodeToOneDnn) {
  if (!cpu::attention_bf16_available() || !cpu::bf16_compute_available())
    GTEST_SKIP() << "the depthwise form needs avx512_bf16, and oneDNN's bf16 kernels native bf16";
  cpu::DepthwisePolicyScope never(cpu::TapPolicy::kNever);
  const Attrs attrs = {{"channels_last", int_attr(1)}, {"group", int_attr(32)},
                       {"pads", ints_attr({1, 1, 1, 1})}, {"compute_precision", string_attr("bf16")}};
  const Tensor x = random_tensor({1, 8, 8, 32}, 400), w = random_tensor({32, 1, 3, 3}, 401);
  NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  const int64_t runs = cpu::depthwise_convolutions_run();
  auto got = fast.run({x, w});
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  EXPECT_EQ(cpu::depthwise_convolutions_run(), runs);
  // Outside fast mode the form never runs, whatever the policy.
  cpu::DepthwisePolicyScope always(cpu::TapPolicy::kAlways);
  Attrs f32 = attrs;
  f32.erase("compute_precision");
  NodeRunner exact("FusedConv", "com.osprey", 1, f32, Device::cpu, {Tensor(), w});
  ASSERT_TRUE(exact.run({x, w}).ok());
  EXPECT_EQ(cpu::depthwise_convolutions_run(), runs);
}

TEST(CpuConvDepthwise, FitsOnlyWhatTheKernelsTake) {
  EXPECT_TRUE(cpu::depthwise_fits(3, 3, 1, 1, 1, 1));
  EXPECT_TRUE(cpu::depthwise_fits(7, 5, 2, 2, 0, 4));
  EXPECT_FALSE(cpu::depthwise_fits(3, 4, 1, 1, 1, 1));  // KW 4 has no kernel
  EXPECT_FALSE(cpu::depthwise_fits(3, 3, 3, 1, 1, 1));  // stride 3
  EXPECT_FALSE(cpu::depthwise_fits(3, 3, 1, 1, 3, 1));  // a pad as large as the kernel
  EXPECT_FALSE(cpu::depthwise_fits(9, 3, 1, 1, 1, 1));  // KH above 7
}

}  // namespace
}  // namespace osprey::testing
