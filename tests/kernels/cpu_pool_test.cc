// com.osprey MaxPool (the row kernel for 2-D channels-last, oneDNN otherwise) against its
// reference (transposes around the reference MaxPool): channels-last and channels-first, 1-D
// to 3-D, strides, explicit and SAME pads, ceil_mode and dilations, 1 and 2 threads, prepared
// and unprepared, NaNs, every vector ISA of the row kernel, bfloat16 tensors, uint8 / int8
// tensors (a quantized model's pool); ONNX MaxPool on the same kernel; and its errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cpu_test_harness.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

void check(const Attrs& attrs, const Tensor& x) {
  static ThreadPool pool2(2);
  NodeRunner ref("MaxPool", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({x});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  NodeRunner prepared("MaxPool", "com.osprey", 1, attrs, Device::cpu, {Tensor()});
  NodeRunner unprepared("MaxPool", "com.osprey", 1, attrs, Device::cpu);
  ASSERT_TRUE(prepared.found());
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run({x}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bit_equal(*got, *want)) << shape_to_string(x.shape());  // a max is exact
    }
}

TEST(CpuMaxPool, ChannelsLastMatchesReference) {
  const Attrs resnet_stem = {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})},
                             {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}};
  check(resnet_stem, random_tensor({1, 16, 16, 8}, 1));
  check(resnet_stem, random_tensor({2, 15, 9, 3}, 2));  // odd sizes, few channels
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2})}},
        random_tensor({1, 8, 8, 17}, 3));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 2})}, {"auto_pad", string_attr("SAME_UPPER")},
         {"strides", ints_attr({2, 1})}},
        random_tensor({1, 7, 6, 5}, 4));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})}, {"ceil_mode", int_attr(1)},
         {"strides", ints_attr({2, 2})}},
        random_tensor({1, 10, 10, 4}, 5));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}},
        random_tensor({1, 9, 9, 4}, 6));
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}},
        random_tensor({2, 11, 6}, 7));  // 1-D, nwc
  check({{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2, 2})}},
        random_tensor({1, 4, 5, 6, 3}, 8));  // 3-D, ndhwc
}

TEST(CpuMaxPool, ChannelsLastLaneBlocksTailsAndNaNsMatchReference) {
  const Attrs stem = {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})},
                      {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}};
  check(stem, random_tensor({1, 14, 14, 64}, 10));  // ResNet's stem channels: whole lane blocks
  check(stem, random_tensor({2, 9, 11, 20}, 11));   // blocks and a tail
  Tensor x = random_tensor({1, 6, 6, 12}, 12);
  for (int64_t i = 0; i < x.numel(); i += 7) x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  check(stem, x);  // NaN taken where it comes first, as the reference does (bit-equal check)
}

TEST(CpuMaxPool, RowKernelMatchesReferenceOnEveryIsa) {
  const Attrs attrs = {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 2})},
                       {"strides", ints_attr({2, 1})}, {"pads", ints_attr({1, 0, 2, 1})},
                       {"dilations", ints_attr({1, 2})}};
  const Tensor x = random_tensor({2, 9, 8, 19}, 13);
  NodeRunner ref("MaxPool", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({x});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  // Output [2, OH, OW, 19]: OH = (9 + 3 - 3) / 2 + 1 = 5, OW = (8 + 1 - 3) / 1 + 1 = 7.
  ASSERT_EQ(want->shape(), (Shape{2, 5, 7, 19}));
  const cpu::PoolGeometry g{9, 8, 19, 5, 7, 3, 2, 2, 1, 1, 2, 1, 0};
  for (cpu::VectorIsa isa : {cpu::VectorIsa::generic, cpu::VectorIsa::avx2, cpu::VectorIsa::avx512}) {
    if (!cpu::vector_isa_supported(isa)) continue;
    Tensor y(DType::kFloat32, want->shape());
    cpu::max_pool_nhwc_rows(isa, x.data<float>(), y.data<float>(), g, 0, 4);  // two calls, split rows
    cpu::max_pool_nhwc_rows(isa, x.data<float>(), y.data<float>(), g, 4, 10);
    EXPECT_TRUE(bit_equal(y, *want)) << cpu::vector_isa_name(isa);
  }
}

// bfloat16 tensors (fast mode's pool between bf16 convolutions): float values truncated to
// bfloat16, pooled, must give exactly the float pool of the same values, narrowed (a max picks
// one of its inputs). Row kernel on every ISA, and the kernel entry (row kernel and oneDNN).
Tensor to_bf16(const Tensor& x) {
  Tensor b(DType::kBFloat16, x.shape());
  auto* bits = static_cast<uint16_t*>(b.raw_data());
  for (int64_t i = 0; i < x.numel(); ++i) {
    uint32_t u;
    std::memcpy(&u, x.data<float>() + i, sizeof u);
    bits[i] = static_cast<uint16_t>(u >> 16);
  }
  return b;
}
Tensor widened(const Tensor& b) {
  Tensor x(DType::kFloat32, b.shape());
  const auto* bits = static_cast<const uint16_t*>(b.raw_data());
  for (int64_t i = 0; i < b.numel(); ++i) {
    const uint32_t u = static_cast<uint32_t>(bits[i]) << 16;
    std::memcpy(x.data<float>() + i, &u, sizeof u);
  }
  return x;
}

TEST(CpuMaxPool, Bf16RowKernelMatchesTheFloatPoolOnEveryIsa) {
  Tensor xf = random_tensor({2, 9, 8, 37}, 14);  // 37 channels: lane blocks and a tail
  for (int64_t i = 0; i < xf.numel(); i += 11) xf.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  const Tensor xb = to_bf16(xf), xw = widened(xb);
  const cpu::PoolGeometry g{9, 8, 37, 5, 7, 3, 2, 2, 1, 1, 2, 1, 0};  // pads, stride, dilation
  const Shape out = {2, 5, 7, 37};
  Tensor want(DType::kFloat32, out);
  cpu::max_pool_nhwc_rows(cpu::VectorIsa::generic, xw.data<float>(), want.data<float>(), g, 0, 10);
  for (cpu::VectorIsa isa : {cpu::VectorIsa::generic, cpu::VectorIsa::avx2, cpu::VectorIsa::avx512}) {
    if (!cpu::vector_isa_supported(isa)) continue;
    Tensor y(DType::kBFloat16, out);
    auto* yb = static_cast<uint16_t*>(y.raw_data());
    const auto* xbits = static_cast<const uint16_t*>(xb.raw_data());
    cpu::max_pool_nhwc_rows_bf16(isa, xbits, yb, g, 0, 3);  // two calls, split rows
    cpu::max_pool_nhwc_rows_bf16(isa, xbits, yb, g, 3, 10);
    EXPECT_TRUE(bit_equal(widened(y), want)) << cpu::vector_isa_name(isa);
  }
}

TEST(CpuMaxPool, Bf16TensorsInAndOut) {
  struct Case {
    Attrs attrs;
    Shape x;
  };
  const std::vector<Case> cases = {
      {{{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})},
        {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}},
       {1, 14, 14, 64}},  // the row kernel (ResNet's stem pool)
      {{{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}},
       {2, 11, 16}},  // 1-D: oneDNN's pooling
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(shape_to_string(c.x));
    if (c.x.size() != 4 && !cpu::avx512_kernels_available()) continue;  // oneDNN's bf16 pooling
    const Tensor xb = to_bf16(random_tensor(c.x, 15));
    NodeRunner ref("MaxPool", "com.osprey", 1, c.attrs, Device::ref);
    auto want = ref.run({widened(xb)});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner fast("MaxPool", "com.osprey", 1, c.attrs, Device::cpu, {Tensor()});
    auto got = fast.run({xb});
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    ASSERT_EQ(got->dtype(), DType::kBFloat16);
    EXPECT_TRUE(bit_equal(widened(*got), *want));
  }
}

TEST(CpuMaxPool, ByteTensorsMatchTheReference) {
  static ThreadPool pool2(2);
  struct Case {
    Shape x;
    Attrs attrs;
  };
  const std::vector<Case> cases = {
      {{1, 17, 13, 70}, {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({3, 3})},
                         {"strides", ints_attr({2, 2})}, {"pads", ints_attr({1, 1, 1, 1})}}},  // ResNet's stem
      {{2, 6, 6, 3}, {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({2, 2})}}},
      {{1, 5, 9, 9}, {{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}}},  // NCHW: oneDNN
  };
  for (DType t : {DType::kUInt8, DType::kInt8})
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(t)) + " " + shape_to_string(c.x));
      Tensor x(t, c.x);
      for (int64_t i = 0; i < x.numel(); ++i)
        static_cast<uint8_t*>(x.raw_data())[i] = static_cast<uint8_t>((i * 97 + 13) % 256);
      NodeRunner ref("MaxPool", "com.osprey", 1, c.attrs, Device::ref, {}, t);
      auto want = ref.run({x});
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      NodeRunner cpu("MaxPool", "com.osprey", 1, c.attrs, Device::cpu, {Tensor()}, t);
      ASSERT_TRUE(cpu.found());
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto got = cpu.run({x}, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        ASSERT_EQ(got->dtype(), t);
        ASSERT_EQ(got->shape(), want->shape());
        EXPECT_EQ(std::memcmp(got->raw_data(), want->raw_data(), want->nbytes()), 0);
      }
    }
  // Every ISA of the row kernel, signed values on both sides of 0.
  Tensor x(DType::kInt8, {1, 7, 7, 35});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<int8_t>()[i] = static_cast<int8_t>((i * 61) % 256 - 128);
  const cpu::PoolGeometry g{7, 7, 35, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0};
  std::vector<int8_t> first;
  for (cpu::VectorIsa isa : runnable_isas()) {
    std::vector<int8_t> y(3 * 3 * 35);
    cpu::max_pool_nhwc_rows_bytes(isa, x.raw_data(), y.data(), true, g, 0, 3);
    for (int64_t oh = 0; oh < 3; ++oh)
      for (int64_t ow = 0; ow < 3; ++ow)
        for (int64_t ch = 0; ch < 35; ++ch) {
          int want = -128;
          for (int64_t kh = 0; kh < 3; ++kh)
            for (int64_t kw = 0; kw < 3; ++kw)
              want = std::max<int>(want, x.data<int8_t>()[((oh * 2 + kh) * 7 + ow * 2 + kw) * 35 + ch]);
          ASSERT_EQ(y[static_cast<size_t>((oh * 3 + ow) * 35 + ch)], want) << cpu::vector_isa_name(isa);
        }
  }
}

TEST(CpuMaxPool, ChannelsFirstMatchesReference) {
  check({{"kernel_shape", ints_attr({3, 3})}, {"pads", ints_attr({1, 0, 1, 2})}}, random_tensor({1, 3, 8, 7}, 9));
}

// ONNX MaxPool (float32, no Indices) runs the same kernel in [N, C, spatial...]: bit for bit the
// reference ONNX MaxPool's, 1-D to 3-D, SAME pads, ceil_mode, dilations; with Indices, or a
// double tensor, the reference itself.
TEST(CpuMaxPool, OnnxMaxPoolMatchesReference) {
  static ThreadPool pool2(2);
  struct Case {
    Attrs attrs;
    Shape shape;
  };
  const std::vector<Case> cases = {
      {{{"kernel_shape", ints_attr({5, 5})}, {"pads", ints_attr({2, 2, 2, 2})}}, {1, 32, 20, 20}},
      {{{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}, {"ceil_mode", int_attr(1)}}, {2, 3, 9, 8}},
      {{{"kernel_shape", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_UPPER")}}, {1, 5, 7, 7}},
      {{{"kernel_shape", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}}, {1, 4, 8, 9}},
      {{{"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}}, {2, 6, 17}},
      {{{"kernel_shape", ints_attr({2, 2, 2})}}, {1, 3, 4, 5, 6}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.shape));
    const Tensor x = random_tensor(c.shape, 4);
    NodeRunner ref("MaxPool", "", 12, c.attrs, Device::ref);
    NodeRunner cpu("MaxPool", "", 12, c.attrs, Device::cpu, {Tensor()});
    ASSERT_TRUE(cpu.found());
    auto want = ref.run({x});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = cpu.run({x}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bit_equal(*got, *want));
    }
  }
  // With the Indices output the reference runs (and gives them).
  const Attrs attrs = {{"kernel_shape", ints_attr({2, 2})}};
  const Tensor x = random_tensor({1, 2, 4, 4}, 5);
  NodeRunner ref("MaxPool", "", 12, attrs, Device::ref);
  NodeRunner cpu("MaxPool", "", 12, attrs, Device::cpu, {Tensor()});
  auto want = ref.run_outputs({x}, 2);
  auto got = cpu.run_outputs({x}, 2);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  EXPECT_TRUE(bit_equal((*got)[0], (*want)[0]));
  EXPECT_TRUE(bit_equal((*got)[1], (*want)[1]));
}

TEST(CpuMaxPool, ErrorsNameTheProblem) {
  NodeRunner r("MaxPool", "com.osprey", 1, {{"channels_last", int_attr(1)}}, Device::cpu);
  auto no_kernel = r.run({random_tensor({1, 4, 4, 2}, 1)});
  ASSERT_FALSE(no_kernel.ok());
  EXPECT_NE(no_kernel.status().message().find("kernel_shape is required"), std::string::npos);
  NodeRunner big("MaxPool", "com.osprey", 1,
                 {{"channels_last", int_attr(1)}, {"kernel_shape", ints_attr({5, 5})}}, Device::cpu);
  auto too_big = big.run({random_tensor({1, 3, 3, 2}, 1)});
  ASSERT_FALSE(too_big.ok());
  EXPECT_NE(too_big.status().message().find("larger than the padded input"), std::string::npos)
      << too_big.status().to_string();
  NodeRunner flat("MaxPool", "com.osprey", 1, {{"kernel_shape", ints_attr({1})}}, Device::cpu);
  auto rank2 = flat.run({random_tensor({4, 4}, 1)});
  ASSERT_FALSE(rank2.ok());
  EXPECT_NE(rank2.status().message().find("rank 3 to 5"), std::string::npos);
}

}  // namespace
}  // namespace osprey::testing
