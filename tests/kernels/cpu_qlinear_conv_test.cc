// com.osprey QLinearConv on oneDNN's int8 convolutions against the reference kernel (exact
// int32 sums, then the float scaling and QuantizeLinear's rounding): uint8 and int8
// activations and outputs, zero points, per-tensor and per-channel weight scales, bias,
// Relu / Clip, groups (depthwise), strides and pads, channels-last and NCHW, one and two
// threads. The int8 primitive regroups the scaling, so an element may differ by one step where
// a value falls within float rounding of a rounding boundary: no more, and rarely.
#include <gtest/gtest.h>

#include <random>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::testing {
namespace {

// Largest |got - want| over the elements (as ints) and how many differ.
std::pair<int, int64_t> byte_diff(const Tensor& got, const Tensor& want) {
  EXPECT_EQ(got.dtype(), want.dtype());
  EXPECT_EQ(got.shape(), want.shape());
  int worst = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < want.numel() && got.numel() == want.numel(); ++i) {
    const int a = got.dtype() == DType::kInt8 ? got.data<int8_t>()[i] : got.data<uint8_t>()[i];
    const int b = want.dtype() == DType::kInt8 ? want.data<int8_t>()[i] : want.data<uint8_t>()[i];
    if (a != b) ++n;
    worst = std::max(worst, std::abs(a - b));
  }
  return {worst, n};
}

struct Case {
  int64_t N, C, H, W, M, k, stride, pad, group;
  DType xt, yt;
  int xzp, yzp;
  bool per_channel, bias, channels_last;
  std::string act;
};

TEST(CpuQLinearConv, MatchesTheReferenceWithinOneStep) {
  static ThreadPool pool2(2);
  const std::vector<Case> cases = {
      {1, 16, 14, 14, 32, 1, 1, 0, 1, DType::kUInt8, DType::kUInt8, 0, 0, true, true, true, "Relu"},
      {1, 24, 12, 10, 40, 3, 1, 1, 1, DType::kUInt8, DType::kUInt8, 131, 117, true, true, true, ""},
      {2, 32, 9, 9, 32, 3, 2, 1, 32, DType::kUInt8, DType::kUInt8, 0, 0, true, true, true, "Clip"},  // depthwise
      {1, 3, 17, 17, 8, 3, 2, 1, 1, DType::kUInt8, DType::kInt8, 128, -3, false, true, true, ""},
      {1, 8, 7, 7, 16, 1, 1, 0, 1, DType::kInt8, DType::kInt8, -5, 4, true, false, true, "Relu"},
      {1, 8, 6, 6, 12, 3, 1, 1, 2, DType::kUInt8, DType::kUInt8, 10, 20, true, true, false, ""},  // NCHW, groups
      {1, 64, 7, 7, 96, 5, 1, 2, 1, DType::kUInt8, DType::kUInt8, 0, 128, true, true, true, "Clip"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("C " + std::to_string(c.C) + " M " + std::to_string(c.M) + " k " + std::to_string(c.k) +
                 " s " + std::to_string(c.stride) + " g " + std::to_string(c.group) + " act " + c.act +
                 (c.channels_last ? " nhwc" : " nchw"));
    const Shape xs = c.channels_last ? Shape{c.N, c.H, c.W, c.C} : Shape{c.N, c.C, c.H, c.W};
    const Tensor x = random_bytes(c.xt, xs, 1);
    const Tensor w = random_bytes(DType::kInt8, {c.M, c.C / c.group, c.k, c.k}, 2);
    std::vector<float> wsv;
    for (int64_t m = 0; m < (c.per_channel ? c.M : 1); ++m) wsv.push_back(0.002f + 0.0003f * static_cast<float>(m % 7));
    const Tensor ws = fvec(wsv);
    std::vector<int8_t> wz(wsv.size(), 0);
    const Tensor b = c.bias ? random_tensor({c.M}, 3) : Tensor();
    // y_scale: about the spread of the products, so outputs use the whole range.
    const float y_scale = 0.02f * std::sqrt(static_cast<float>(c.C / c.group * c.k * c.k));
    const std::vector<Tensor> in = {x, fvec({0.05f}), byte_scalar(c.xt, c.xzp), w, ws, vec<int8_t>(wz),
                                    fvec({y_scale}), byte_scalar(c.yt, c.yzp), b};
    Attrs attrs = {{"group", int_attr(c.group)},
                   {"strides", ints_attr({c.stride, c.stride})},
                   {"pads", ints_attr({c.pad, c.pad, c.pad, c.pad})},
                   {"channels_last", int_attr(c.channels_last ? 1 : 0)}};
    if (!c.act.empty()) attrs["activation"] = string_attr(c.act);
    if (c.act == "Clip") attrs["activation_params"] = floats_attr({-0.5f, 2.1f});
    std::vector<Tensor> constants = in;
    constants[0] = Tensor();
    NodeRunner ref("QLinearConv", "com.osprey", 1, attrs, Device::ref, {}, c.xt);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      NodeRunner cpu("QLinearConv", "com.osprey", 1, attrs, Device::cpu, constants, c.xt);
      ASSERT_TRUE(cpu.found());
      ASSERT_TRUE(cpu.prepare_status().ok()) << cpu.prepare_status().to_string();
      const int64_t before = cpu::int8_convolutions_built();
      auto got = cpu.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      const auto [worst, n] = byte_diff(*got, *want);
      if (cpu::int8_vnni_available()) {
        EXPECT_GT(cpu::int8_convolutions_built(), before) << "the int8 primitive did not run";
        EXPECT_LE(worst, 1);
        EXPECT_LE(n, want->numel() / 100) << n << " of " << want->numel() << " elements differ";
      } else {  // no VNNI: the reference runs (oneDNN's int8 kernels would saturate)
        EXPECT_EQ(cpu::int8_convolutions_built(), before);
        EXPECT_EQ(worst, 0);
      }
    }
  }
}

// An int32 bias (ONNX QLinearConv's, kept by qoperator_rewrite): ONNX's arithmetic on both
// paths, (acc + B) * x_scale * w_scale / y_scale.
TEST(CpuQLinearConv, Int32BiasFollowsOnnxArithmetic) {
  static ThreadPool pool2(2);
  for (bool channels_last : {true, false}) {
    SCOPED_TRACE(channels_last ? "nhwc" : "nchw");
    const Shape xs = channels_last ? Shape{1, 9, 9, 16} : Shape{1, 16, 9, 9};
    const Tensor x = random_bytes(DType::kUInt8, xs, 21);
    const Tensor w = random_bytes(DType::kInt8, {24, 16, 3, 3}, 22);
    std::vector<float> wsv;
    std::vector<int32_t> bv;
    for (int m = 0; m < 24; ++m) {
      wsv.push_back(0.003f + 0.0002f * static_cast<float>(m % 5));
      bv.push_back((m * 7919) % 40000 - 20000);
    }
    const std::vector<Tensor> in = {x, fvec({0.04f}), byte_scalar(DType::kUInt8, 120), w, fvec(wsv),
                                    vec<int8_t>(std::vector<int8_t>(24, 0)), fvec({0.5f}),
                                    byte_scalar(DType::kUInt8, 128), vec<int32_t>(bv)};
    const Attrs attrs = {{"pads", ints_attr({1, 1, 1, 1})}, {"channels_last", int_attr(channels_last ? 1 : 0)}};
    std::vector<Tensor> constants = in;
    constants[0] = Tensor();
    NodeRunner ref("QLinearConv", "com.osprey", 1, attrs, Device::ref, {}, DType::kUInt8);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    // The reference against ONNX's own QLinearConv kernel, on NCHW: the same bits.
    if (!channels_last) {
      auto onnx = run_single("QLinearConv", 10, in, {{"pads", ints_attr({1, 1, 1, 1})}});
      ASSERT_TRUE(onnx.ok()) << onnx.status().to_string();
      EXPECT_EQ(byte_diff(*want, *onnx), (std::pair<int, int64_t>{0, 0}));
    }
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      NodeRunner cpu("QLinearConv", "com.osprey", 1, attrs, Device::cpu, constants, DType::kUInt8);
      const int64_t before = cpu::int8_convolutions_built();
      auto got = cpu.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      const auto [worst, n] = byte_diff(*got, *want);
      EXPECT_LE(worst, 1);
      EXPECT_LE(n, want->numel() / 100);
      if (cpu::int8_vnni_available()) EXPECT_GT(cpu::int8_convolutions_built(), before);
    }
  }
}

TEST(CpuQLinearConv, FormsThePrimitiveDoesNotTakeRunOnTheReference) {
  // Weights with a non-zero zero point: the reference's result exactly.
  const Tensor x = random_bytes(DType::kUInt8, {1, 4, 5, 5}, 4);
  const Tensor w = random_bytes(DType::kInt8, {6, 4, 3, 3}, 5);
  const std::vector<Tensor> in = {x, fvec({0.1f}), byte_scalar(DType::kUInt8, 3), w, fvec({0.01f}),
                                  vec<int8_t>({7}), fvec({0.2f}), byte_scalar(DType::kUInt8, 9), Tensor()};
  std::vector<Tensor> constants = in;
  constants[0] = Tensor();
  NodeRunner ref("QLinearConv", "com.osprey", 1, {}, Device::ref, {}, DType::kUInt8);
  NodeRunner cpu("QLinearConv", "com.osprey", 1, {}, Device::cpu, constants, DType::kUInt8);
  auto want = ref.run(in);
  auto got = cpu.run(in);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(byte_diff(*got, *want), (std::pair<int, int64_t>{0, 0}));
  // A bad weights shape is an error naming it, on both paths.
  std::vector<Tensor> bad = in;
  bad[3] = random_bytes(DType::kInt8, {6, 3, 3, 3}, 6);
  auto r = cpu.run(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("weights"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
