// ONNX ConvInteger on oneDNN's int8 convolution (int32 destination, the source zero point given
// at run time) against the reference: the sums are exact, so equal bit for bit. uint8 and int8
// activations, zero points absent / 0 / mid-range / changing between runs, pads (the shifted
// padding is 0), strides, groups (depthwise), one and two threads; weights with a non-zero
// zero point run on the reference. com.osprey ConvIntegerToFloat (scale and bias as post-ops,
// Relu / Clip, NCHW and channels-last) likewise, bit for bit.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::testing {
namespace {

struct Case {
  int64_t C, H, W, M, k, stride, pad, group;
  DType xt;
  std::vector<int> zps;  // x_zero_point per run; -1000: no input
};

TEST(CpuConvInteger, EqualsTheReference) {
  static ThreadPool pool2(2);
  const std::vector<Case> cases = {
      {3, 17, 15, 8, 3, 2, 1, 1, DType::kUInt8, {131, 0, 255}},  // a stem: stride 2, padded
      {16, 9, 9, 16, 3, 1, 1, 16, DType::kUInt8, {97, 12}},      // depthwise
      {24, 7, 7, 40, 1, 1, 0, 1, DType::kUInt8, {-1000}},        // pointwise, no zero point
      {8, 6, 10, 12, 3, 1, 1, 2, DType::kInt8, {-7, 100}},       // int8 activations, groups
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("C " + std::to_string(c.C) + " M " + std::to_string(c.M) + " k " + std::to_string(c.k) + " group " +
                 std::to_string(c.group));
    const Tensor x = random_bytes(c.xt, {1, c.C, c.H, c.W}, 1);
    const Tensor w = random_bytes(DType::kInt8, {c.M, c.C / c.group, c.k, c.k}, 2);
    const Attrs attrs = {{"pads", ints_attr({c.pad, c.pad, c.pad, c.pad})},
                         {"strides", ints_attr({c.stride, c.stride})},
                         {"group", int_attr(c.group)}};
    const Tensor w_zp = vec<int8_t>(std::vector<int8_t>(static_cast<size_t>(c.M), 0));
    NodeRunner ref("ConvInteger", "", 10, attrs, Device::ref, {}, c.xt);
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      NodeRunner cpu("ConvInteger", "", 10, attrs, Device::cpu, {Tensor(), w, Tensor(), w_zp}, c.xt);
      ASSERT_TRUE(cpu.found());
      ASSERT_TRUE(cpu.prepare_status().ok()) << cpu.prepare_status().to_string();
      const int64_t before = cpu::int8_convolutions_built();
      for (int zp : c.zps) {  // one primitive serves every zero point
        SCOPED_TRACE("x_zero_point " + std::to_string(zp));
        const std::vector<Tensor> in = {x, w, zp == -1000 ? Tensor() : byte_scalar(c.xt, zp), w_zp};
        auto want = ref.run(in);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        auto got = cpu.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        EXPECT_TRUE(int32_equal(*got, *want));
      }
      if (cpu::int8_vnni_available())
        EXPECT_EQ(cpu::int8_convolutions_built(), before + 1) << "the int8 primitive did not run once";
      else
        EXPECT_EQ(cpu::int8_convolutions_built(), before);
    }
  }
}

TEST(CpuConvInteger, WeightsWithAZeroPointRunOnTheReference) {
  const Tensor x = random_bytes(DType::kUInt8, {1, 4, 6, 6}, 3);
  const Tensor w = random_bytes(DType::kInt8, {5, 4, 3, 3}, 4);
  const std::vector<Tensor> in = {x, w, byte_scalar(DType::kUInt8, 128), byte_scalar(DType::kInt8, 3)};
  NodeRunner ref("ConvInteger", "", 10, {}, Device::ref, {}, DType::kUInt8);
  NodeRunner cpu("ConvInteger", "", 10, {}, Device::cpu, {Tensor(), w, Tensor(), in[3]}, DType::kUInt8);
  auto want = ref.run(in);
  const int64_t before = cpu::int8_convolutions_built();
  auto got = cpu.run(in);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_TRUE(int32_equal(*got, *want));
  EXPECT_EQ(cpu::int8_convolutions_built(), before);
}

TEST(CpuConvIntegerToFloat, EqualsTheReference) {
  static ThreadPool pool2(2);
  struct FloatCase {
    int64_t C, M, k, stride, pad, group;
    bool channels_last, bias;
    std::string act;
  };
  const std::vector<FloatCase> cases = {
      {3, 8, 3, 2, 1, 1, false, true, "Clip"}, {8, 8, 3, 1, 1, 8, true, true, "Clip"},
      {16, 24, 1, 1, 0, 1, true, true, ""},    {16, 24, 1, 1, 0, 1, false, false, "Relu"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("C " + std::to_string(c.C) + " M " + std::to_string(c.M) + " group " + std::to_string(c.group) +
                 (c.channels_last ? " channels-last" : " NCHW") + " " + c.act);
    const Shape xs = c.channels_last ? Shape{1, 9, 11, c.C} : Shape{1, c.C, 9, 11};
    const Tensor x = random_bytes(DType::kUInt8, xs, 5);
    const Tensor w = random_bytes(DType::kInt8, {c.M, c.C / c.group, c.k, c.k}, 6);
    std::vector<float> b;
    for (int64_t m = 0; m < c.M; ++m) b.push_back(0.25f * static_cast<float>(m % 5) - 0.5f);
    const Tensor bias = fvec(b);
    Attrs attrs = {{"pads", ints_attr({c.pad, c.pad, c.pad, c.pad})},
                   {"strides", ints_attr({c.stride, c.stride})},
                   {"group", int_attr(c.group)},
                   {"channels_last", int_attr(c.channels_last ? 1 : 0)}};
    if (!c.act.empty()) attrs["activation"] = string_attr(c.act);
    if (c.act == "Clip") attrs["activation_params"] = floats_attr({0.0f, 6.0f});
    NodeRunner ref("ConvIntegerToFloat", "com.osprey", 1, attrs, Device::ref, {}, DType::kUInt8);
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      std::vector<Tensor> constants = {Tensor(), w, Tensor(), Tensor(), Tensor()};
      if (c.bias) constants.push_back(bias);
      NodeRunner cpu("ConvIntegerToFloat", "com.osprey", 1, attrs, Device::cpu, constants, DType::kUInt8);
      ASSERT_TRUE(cpu.found());
      ASSERT_TRUE(cpu.prepare_status().ok()) << cpu.prepare_status().to_string();
      const int64_t before = cpu::int8_convolutions_built();
      for (auto [zp, scale] : {std::pair{121, 0.0031f}, std::pair{7, 0.017f}}) {
        std::vector<Tensor> in = {x, w, byte_scalar(DType::kUInt8, zp), Tensor(), fvec({scale})};
        if (c.bias) in.push_back(bias);
        auto want = ref.run(in);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        auto got = cpu.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        double worst = 0;
        for (int64_t i = 0; i < want->numel() && got->numel() == want->numel(); ++i)
          worst = std::max(worst, static_cast<double>(std::fabs(got->data<float>()[i] - want->data<float>()[i])));
        EXPECT_TRUE(got->dtype() == DType::kFloat32 && bit_equal(*got, *want)) << "zero point " << zp << " worst " << worst;
      }
      if (cpu::int8_vnni_available())
        EXPECT_EQ(cpu::int8_convolutions_built(), before + 1) << "the int8 primitive did not run once";
    }
  }
}

}  // namespace
}  // namespace osprey::testing
