// Convolutions with the winograd attribute (SessionOptions::winograd, kernels/cpu/conv_dnnl.cc):
// against the reference FusedConv / Conv on channels-last and NCHW shapes (odd sizes, channel
// counts that are not a multiple of 16, pads on every side, bias, residual Z, activations,
// batches, 1 and 2 threads), which nodes take the Winograd path (where oneDNN offers it: the
// counter of Winograd primitives moves) and which stay direct (auto: too few channels or
// pixels; any mode: stride, dilation), a new shape after the session
// released the plain weights, and malformed attributes. These tests hold our own F(2x2, 3x3)
// form (conv_winograd_nhwc.h, tested in cpu_conv_winograd_nhwc_test.cc) off, so that the shapes it
// fits reach oneDNN's primitive.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "nhwc_conv_case.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/conv_winograd_nhwc.h"
#include "kernels/cpu/conv_winograd_choice.h"
#include "kernels/cpu/dnnl_common.h"

namespace osprey::testing {
namespace {

// Whether oneDNN offers a Winograd primitive here (AVX-512: jit_wino_4x3 / jit_fp32_wino_2x3).
bool winograd_offered() {
  using dnnl::memory;
  const auto any = memory::format_tag::any;
  const memory::desc src({1, 64, 14, 14}, memory::data_type::f32, any),
      dst({1, 64, 14, 14}, memory::data_type::f32, any),
      w({64, 64, 3, 3}, memory::data_type::f32, any);
  dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                    dnnl::algorithm::convolution_winograd, src, w, dst, {1, 1},
                                    {1, 1}, {1, 1});
  dnnl::convolution_forward::primitive_desc pd(d, dnnl::primitive_attr(), cpu::dnnl_engine(), true);
  return static_cast<bool>(pd);
}

struct Case {
  const char* name;
  const char* op;  // "FusedConv" (com.osprey) or "Conv"
  bool channels_last;
  Shape x, w;  // X as the node takes it (NHWC when channels_last), W [M, C, 3, 3]
  Attrs attrs;
  bool bias, residual;
  // Whether the node should take the Winograd path where oneDNN offers one: 1 yes, 0 no,
  // -1 as oneDNN decides (its Winograd kernels take no post-op but ReLU and the residual sum)
  // or, for winograd = 1 on an eligible shape, as the timing at its first build decides
  // (AutoTakesWhatMeasuredFasterOncePerShape).
  int winograd;
};

Attrs with(Attrs a, int64_t winograd, bool channels_last) {
  a["winograd"] = int_attr(winograd);
  if (channels_last) a["channels_last"] = int_attr(1);
  return a;
}

std::vector<Case> cases() {
  const Attrs relu = {{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}};
  return {
      {"nhwc_64_to_64_14x14_bias_relu_residual", "FusedConv", true, {1, 14, 14, 64},
       {64, 64, 3, 3}, with(relu, 1, true), true, true, -1},
      {"nhwc_70_to_72_odd_13x17_relu_batch2", "FusedConv", true, {2, 13, 17, 70},
       {72, 70, 3, 3}, with(relu, 1, true), false, false, -1},
      {"nhwc_asymmetric_pads_clip", "FusedConv", true, {1, 11, 10, 64}, {64, 64, 3, 3},
       with({{"pads", ints_attr({1, 0, 0, 1})},
             {"activation", string_attr("Clip")},
             {"activation_params", floats_attr({-0.5f, 0.5f})}},
            2, true),
       true, true, -1},
      {"nchw_conv_64_to_80_16x18_no_pads", "Conv", false, {1, 64, 16, 18}, {80, 64, 3, 3},
       with({}, 1, false), true, false, -1},
      {"nhwc_16_to_24_on_forces_it", "FusedConv", true, {1, 9, 9, 16}, {24, 16, 3, 3},
       with(relu, 2, true), true, false, 1},
      {"nhwc_16_to_24_auto_stays_direct", "FusedConv", true, {1, 9, 9, 16}, {24, 16, 3, 3},
       with(relu, 1, true), true, false, 0},
      {"nhwc_7x7_output_auto_stays_direct", "FusedConv", true, {1, 7, 7, 64}, {64, 64, 3, 3},
       with(relu, 1, true), true, false, 0},
      {"nhwc_7x7_output_on_forces_it", "FusedConv", true, {1, 7, 7, 64}, {64, 64, 3, 3},
       with(relu, 2, true), true, false, 1},
      {"nhwc_stride2_stays_direct", "FusedConv", true, {1, 12, 12, 64}, {64, 64, 3, 3},
       with({{"pads", ints_attr({1, 1, 1, 1})}, {"strides", ints_attr({2, 2})}}, 2, true), true,
       false, 0},
      {"nhwc_dilated_stays_direct", "FusedConv", true, {1, 12, 12, 64}, {64, 64, 3, 3},
       with({{"pads", ints_attr({2, 2, 2, 2})}, {"dilations", ints_attr({2, 2})}}, 2, true),
       false, false, 0},
  };
}

const char* domain_of(const Case& c) {
  return std::string(c.op) == "Conv" ? "" : "com.osprey";
}

TEST(CpuConvWinograd, MatchesReferenceAndTakesThePathWhereOffered) {
  cpu::WinogradNhwcPolicyScope ours_off(cpu::TapPolicy::kNever);
  const bool offered = winograd_offered();
  ThreadPool pool2(2);
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    const int opset = std::string(c.op) == "Conv" ? 11 : 1;
    const Tensor x = random_tensor(c.x, 1), w = random_tensor(c.w, 2), b = random_tensor({c.w[0]}, 3);
    NodeRunner ref(c.op, domain_of(c), opset, c.attrs, Device::ref);
    auto shape_run = ref.run({x, w, c.bias ? b : Tensor()});
    ASSERT_TRUE(shape_run.ok()) << shape_run.status().to_string();
    const Tensor z = c.residual ? random_tensor(shape_run->shape(), 4) : Tensor();
    std::vector<Tensor> in = {x, w, c.bias ? b : Tensor()};
    if (c.residual) in.push_back(z);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner fast(c.op, domain_of(c), opset, c.attrs, Device::cpu, {Tensor(), w});
    ASSERT_TRUE(fast.found());
    ASSERT_TRUE(fast.prepare_status().ok()) << fast.prepare_status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      const int64_t before = cpu::winograd_convolutions_built();
      auto got = fast.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      const int64_t built = cpu::winograd_convolutions_built() - before;
      if (c.winograd >= 0) {
        EXPECT_EQ(built, c.winograd == 1 && offered ? 1 : 0);
      }
      expect_close(*got, *want);
    }
  }
}

// winograd = 1 on an eligible shape with constant weights: the first node of the shape times
// Winograd against the direct primitive and takes the faster; a second node of the same shape
// (other weights) takes the same path without timing again. Either path matches the reference.
TEST(CpuConvWinograd, AutoTakesWhatMeasuredFasterOncePerShape) {
  cpu::WinogradNhwcPolicyScope ours_off(cpu::TapPolicy::kNever);
  const bool offered = winograd_offered();
  const Attrs attrs = with({{"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Relu")}},
                           1, true);
  const Tensor x = random_tensor({1, 20, 18, 96}, 11), b = random_tensor({96}, 12);
  int64_t first_built = -1;
  for (int node = 0; node < 2; ++node) {
    SCOPED_TRACE(node);
    const Tensor w = random_tensor({96, 96, 3, 3}, 13 + node);
    NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
    auto want = ref.run({x, w, b});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner fast("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
    const int64_t trials = cpu::winograd_trials_run(), built = cpu::winograd_convolutions_built();
    auto got = fast.run({x, w, b});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(*got, *want);
    const int64_t timed = cpu::winograd_trials_run() - trials;
    const int64_t took = cpu::winograd_convolutions_built() - built;
    EXPECT_EQ(timed, offered && node == 0 ? 1 : 0);
    EXPECT_LE(took, offered ? 1 : 0);
    if (node == 0) first_built = took;
    else EXPECT_EQ(took, first_built) << "the second node of the shape chose differently";
  }
}

// A node that ran Winograd keeps the plain weights beside its Winograd ones: after the session
// releases its copy, a new input shape is still reordered into the Winograd layout.
TEST(CpuConvWinograd, NewShapeAfterTheWeightsWereReleased) {
  cpu::WinogradNhwcPolicyScope ours_off(cpu::TapPolicy::kNever);
  const Attrs attrs = with({{"pads", ints_attr({1, 1, 1, 1})}}, 2, true);
  const int64_t built_for_second = runs_around_a_release(
      attrs, random_tensor({64, 64, 3, 3}, 5), random_tensor({64}, 6), random_tensor({1, 8, 8, 64}, 7),
      random_tensor({1, 11, 6, 64}, 8), cpu::winograd_convolutions_built).second;
  EXPECT_EQ(built_for_second, winograd_offered() ? 1 : 0);
}

TEST(CpuConvWinograd, MalformedAttributeIsAnError) {
  const Tensor x = random_tensor({1, 6, 6, 8}, 9), w = random_tensor({8, 8, 3, 3}, 10);
  for (int64_t bad : {-1, 3}) {
    SCOPED_TRACE(bad);
    NodeRunner fast("FusedConv", "com.osprey", 1, with({}, bad, true), Device::cpu);
    auto r = fast.run({x, w});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("winograd must be 0, 1 or 2"), std::string::npos)
        << r.status().to_string();
  }
}

}  // namespace
}  // namespace osprey::testing
