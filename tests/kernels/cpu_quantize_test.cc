// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear on the vectorized row kernels against the reference
// kernels, which must agree bit for bit: every ISA variant this CPU can run, values on and
// next to the rounding ties, saturation, NaN and infinities, uint8 and int8, per tensor and per
// axis, one and two threads, and the forms handed to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "cpu_test_harness.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

using cpu::VectorIsa;

// Floats around a scale's grid: exact ties (k + 1/2) * scale, their neighbours one ulp away,
// values far past the saturation bounds, zeros of both signs, NaN and infinities.
Tensor awkward_floats(int64_t n, float scale, uint32_t seed) {
  Tensor t(DType::kFloat32, {n});
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> k(-300, 300), pick(0, 9);
  float* p = t.data<float>();
  const float inf = std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    const float tie = (static_cast<float>(k(gen)) + 0.5f) * scale;
    switch (pick(gen)) {
      case 0: p[i] = std::nextafter(tie, inf); break;
      case 1: p[i] = std::nextafter(tie, -inf); break;
      case 2: p[i] = static_cast<float>(k(gen)) * 1e4f; break;
      case 3: p[i] = i % 2 ? -0.0f : 0.0f; break;
      case 4: p[i] = i % 3 == 0 ? std::nanf("") : (i % 3 == 1 ? inf : -inf); break;
      default: p[i] = tie; break;
    }
  }
  return t;
}

Tensor scalar_zp(DType t, int v) {
  return t == DType::kInt8 ? vec<int8_t>({static_cast<int8_t>(v)}) : vec<uint8_t>({static_cast<uint8_t>(v)});
}

bool bytes_equal(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.nbytes() == b.nbytes() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

TEST(CpuQuantize, RowKernelsMatchTheReferenceBitForBitOnEveryIsa) {
  struct Case {
    DType type;
    int zp;
    float scale;
  };
  const std::vector<Case> cases = {{DType::kUInt8, 0, 0.0117f}, {DType::kUInt8, 131, 0.5f},
                                   {DType::kUInt8, 255, 3.0f},  {DType::kInt8, 0, 0.0625f},
                                   {DType::kInt8, -128, 0.1f},  {DType::kInt8, 17, 1.0f / 3}};
  for (VectorIsa isa : runnable_isas()) {
    for (const auto& c : cases) {
      for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{100}, int64_t{1031}}) {
        SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " n " + std::to_string(n) + " zp " +
                     std::to_string(c.zp) + " scale " + std::to_string(c.scale));
        const Tensor x = awkward_floats(n, c.scale, static_cast<uint32_t>(n + c.zp));
        const Tensor s = fvec({c.scale});
        const Tensor z = scalar_zp(c.type, c.zp);
        auto want = run_single("QuantizeLinear", 13, {x, s, z});
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        Tensor got(c.type, x.shape());
        cpu::quantize_row(isa, x.data<float>(), got.raw_data(), n, c.scale, c.zp, c.type == DType::kInt8);
        EXPECT_TRUE(bytes_equal(got, *want));
        for (int64_t i = 0; i < n; ++i)
          if (std::isnan(x.data<float>()[i])) {
            const int q = c.type == DType::kInt8 ? got.data<int8_t>()[i] : got.data<uint8_t>()[i];
            EXPECT_EQ(q, 0) << "NaN at " << i;
          }
        // And back.
        auto back = run_single("DequantizeLinear", 13, {*want, s, z});
        ASSERT_TRUE(back.ok()) << back.status().to_string();
        Tensor deq(DType::kFloat32, x.shape());
        cpu::dequantize_row(isa, want->raw_data(), deq.data<float>(), n, c.scale, c.zp, c.type == DType::kInt8);
        EXPECT_TRUE(bit_equal(deq, *back));
      }
    }
  }
}

TEST(CpuQuantize, KernelsMatchTheReferenceOnThreadsPerTensorAndPerAxis) {
  static ThreadPool pool2(2);
  struct Case {
    Shape shape;
    int64_t axis;       // -100: per tensor
    DType type;
    bool zp;
  };
  const std::vector<Case> cases = {
      {{1, 64, 112, 112}, -100, DType::kUInt8, true},  // many chunks per thread
      {{2, 3, 5}, -100, DType::kInt8, true},
      {{7}, -100, DType::kUInt8, false},               // no zero point: uint8, zp 0
      {{}, -100, DType::kInt8, true},                  // a scalar
      {{0, 4}, -100, DType::kUInt8, true},             // empty
      {{2, 8, 5, 7}, 1, DType::kInt8, true},           // per axis, blocks of 35 (taken here)
      {{3, 4, 5000}, 1, DType::kUInt8, true},          // per axis, blocks longer than a chunk
      {{2, 8, 5, 7}, 3, DType::kUInt8, true},          // per axis along the last axis (reference)
      {{4, 6}, 0, DType::kInt8, false},                // per axis, blocks of 6 (reference)
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(shape_to_string(c.shape) + " axis " + std::to_string(c.axis));
    Attrs attrs;
    Tensor s, z;
    if (c.axis == -100) {
      s = fvec({0.037f});
      z = scalar_zp(c.type, c.type == DType::kInt8 ? -3 : 120);
    } else {
      attrs["axis"] = int_attr(c.axis);
      const int64_t m = c.shape[static_cast<size_t>(c.axis)];
      std::vector<float> sv;
      std::vector<int8_t> zi;
      std::vector<uint8_t> zu;
      for (int64_t i = 0; i < m; ++i) {
        sv.push_back(0.01f * static_cast<float>(i + 1));
        zi.push_back(static_cast<int8_t>(i * 7 - 20));
        zu.push_back(static_cast<uint8_t>(i * 11 + 3));
      }
      s = fvec(sv);
      z = c.type == DType::kInt8 ? vec<int8_t>(zi) : vec<uint8_t>(zu);
    }
    Tensor x = random_tensor(c.shape, 11);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 5.0f;
    std::vector<Tensor> qin = {x, s};
    if (c.zp) qin.push_back(z);
    NodeRunner qref("QuantizeLinear", "", 13, attrs, Device::ref);
    NodeRunner qcpu("QuantizeLinear", "", 13, attrs, Device::cpu);
    ASSERT_TRUE(qcpu.found());
    auto want = qref.run(qin);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    const DType qt = c.zp ? c.type : DType::kUInt8;
    NodeRunner dref("DequantizeLinear", "", 13, attrs, Device::ref, {}, qt);
    NodeRunner dcpu("DequantizeLinear", "", 13, attrs, Device::cpu, {}, qt);
    ASSERT_TRUE(dcpu.found());
    std::vector<Tensor> din = {*want, s};
    if (c.zp) din.push_back(z);
    auto dwant = dref.run(din);
    ASSERT_TRUE(dwant.ok()) << dwant.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = qcpu.run(qin, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bytes_equal(*got, *want));
      auto dgot = dcpu.run(din, pool);
      ASSERT_TRUE(dgot.ok()) << dgot.status().to_string();
      EXPECT_TRUE(bit_equal(*dgot, *dwant));
    }
  }
}

TEST(CpuQuantize, BadParametersGetTheReferencesErrors) {
  NodeRunner qcpu("QuantizeLinear", "", 13, {}, Device::cpu);
  ASSERT_TRUE(qcpu.found());
  const Tensor x = random_tensor({2, 3}, 1);
  // A scale of the wrong length for the default axis 1.
  auto r = qcpu.run({x, fvec({0.1f, 0.2f}), vec<uint8_t>({0, 0})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("scale"), std::string::npos) << r.status().to_string();
  // A zero point of another type than uint8/int8.
  auto r2 = qcpu.run({x, fvec({0.1f}), vec<int32_t>({0})});
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().to_string().find("zero_point"), std::string::npos) << r2.status().to_string();
}

}  // namespace
}  // namespace osprey::testing

namespace osprey::testing {
namespace {

// DynamicQuantizeLinear: the range over every chunk and thread, then the same quantization.
TEST(CpuQuantize, DynamicQuantizeLinearMatchesTheReferenceBitForBit) {
  static ThreadPool pool2(2);
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (int64_t n : {1, 15, 16, 33, 8191, 8192, 8193, 50000}) {
    Tensor r = random_tensor({n}, static_cast<uint32_t>(n));
    if (n > 40000)
      for (int64_t i = 0; i < n; ++i) r.data<float>()[i] = r.data<float>()[i] * 0.01f + (i == 45000 ? 9.0f : 0.0f);
    inputs.emplace_back("random " + std::to_string(n), r);
  }
  inputs.emplace_back("awkward (NaN, infinities)", awkward_floats(20000, 0.05f, 7));
  inputs.emplace_back("zeros", Tensor(DType::kFloat32, {2, 300}));
  Tensor pos = random_tensor({3, 4, 700}, 8);
  for (int64_t i = 0; i < pos.numel(); ++i) pos.data<float>()[i] = std::fabs(pos.data<float>()[i]) + 1.0f;
  inputs.emplace_back("all positive", pos);
  Tensor nan_only(DType::kFloat32, {40});
  for (int64_t i = 0; i < 40; ++i) nan_only.data<float>()[i] = i % 2 ? std::nanf("") : -2.0f;
  inputs.emplace_back("negatives and NaN", nan_only);
  NodeRunner ref("DynamicQuantizeLinear", "", 11, {}, Device::ref);
  NodeRunner cpu("DynamicQuantizeLinear", "", 11, {}, Device::cpu);
  ASSERT_TRUE(cpu.found());
  for (const auto& [name, x] : inputs) {
    SCOPED_TRACE(name);
    auto want = ref.run_outputs({x}, 3);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = cpu.run_outputs({x}, 3, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ((*got)[0].shape(), x.shape());
      EXPECT_EQ(std::memcmp((*got)[0].raw_data(), (*want)[0].raw_data(), (*want)[0].nbytes()), 0);
      EXPECT_EQ((*got)[1].data<float>()[0], (*want)[1].data<float>()[0]);
      EXPECT_EQ((*got)[2].data<uint8_t>()[0], (*want)[2].data<uint8_t>()[0]);
    }
  }
}

TEST(CpuQuantize, QLinearAddMatchesTheReferenceBitForBit) {
  static ThreadPool pool2(2);
  struct Case {
    Shape shape;
    DType a, b, y;
    bool relu;
  };
  const std::vector<Case> cases = {{{1, 56, 56, 64}, DType::kUInt8, DType::kUInt8, DType::kUInt8, true},
                                   {{3, 17}, DType::kInt8, DType::kUInt8, DType::kInt8, false},
                                   {{5}, DType::kUInt8, DType::kInt8, DType::kUInt8, true},
                                   {{0, 3}, DType::kUInt8, DType::kUInt8, DType::kUInt8, false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(shape_to_string(c.shape) + (c.relu ? " relu" : ""));
    auto bytes = [&](DType t, uint32_t seed) {
      Tensor r(t, c.shape);
      for (int64_t i = 0; i < r.numel(); ++i) static_cast<uint8_t*>(r.raw_data())[i] = static_cast<uint8_t>(i * 131 + seed * 17);
      return r;
    };
    auto zp = [](DType t, int v) {
      return t == DType::kInt8 ? vec<int8_t>({static_cast<int8_t>(v)}) : vec<uint8_t>({static_cast<uint8_t>(v)});
    };
    const std::vector<Tensor> in = {bytes(c.a, 1), fvec({0.031f}), zp(c.a, c.a == DType::kInt8 ? -4 : 120),
                                    bytes(c.b, 2), fvec({0.047f}), zp(c.b, c.b == DType::kInt8 ? 9 : 131),
                                    fvec({0.05f}), zp(c.y, c.y == DType::kInt8 ? -2 : 100)};
    Attrs attrs;
    if (c.relu) attrs["activation"] = string_attr("Relu");
    NodeRunner ref("QLinearAdd", "com.osprey", 1, attrs, Device::ref, {}, c.a);
    NodeRunner cpu("QLinearAdd", "com.osprey", 1, attrs, Device::cpu, {}, c.a);
    ASSERT_TRUE(cpu.found());
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = cpu.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      EXPECT_TRUE(bytes_equal(*got, *want));
    }
  }
  // Shapes that differ are an error naming both.
  NodeRunner cpu("QLinearAdd", "com.osprey", 1, {}, Device::cpu, {}, DType::kUInt8);
  Tensor a(DType::kUInt8, {2, 3}), b(DType::kUInt8, {3, 2});
  auto r = cpu.run({a, fvec({1.0f}), vec<uint8_t>({0}), b, fvec({1.0f}), vec<uint8_t>({0}), fvec({1.0f}), vec<uint8_t>({0})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("[3,2]"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
