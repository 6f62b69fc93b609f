// MatMulInteger on oneDNN's int8 matmul against the reference kernel: the int32 sums are
// exact, so the results must be equal bit for bit. uint8 and int8 A, per-tensor a_zero_point
// (absent, 0, mid-range, negative), batched A, awkward K and N, int8 and uint8 B with zero
// points of zero and not, one and two threads; forms the primitive does not take (a non-zero b_zero_point, B not a constant,
// per-row a_zero_point) run on the reference. com.osprey MatMulIntegerToFloat (the scale and
// bias as post-ops: the conversion, the product and the sum in the reference's order) too;
// with a Gelu after them (oneDNN's formula), within float rounding; with a quantized output
// (y_scale, y_zero_point: uint8 and int8, per-tensor and per-column scales, bias, Relu), bit for
// bit, ties of the division included.
#include <gtest/gtest.h>

#include <random>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"

namespace osprey::testing {
namespace {

struct Case {
  Shape a;
  int64_t N;
  DType at;
  int a_zp;  // -1000: no a_zero_point input
  bool b_zero_input;
  DType bt = DType::kInt8;
  int b_zp = 0;  // with b_zero_input: per tensor when non-zero, else N zeros
};

TEST(CpuMatMulInteger, EqualsTheReference) {
  static ThreadPool pool2(2);
  const std::vector<Case> cases = {
      {{128, 384}, 1536, DType::kUInt8, 131, false},  // a transformer's feed-forward layer
      {{1, 7, 37}, 19, DType::kUInt8, 0, true},       // awkward K and N
      {{2, 3, 64}, 48, DType::kUInt8, 255, false},    // batch dims fold into the rows
      {{5, 16}, 3, DType::kInt8, -5, false},
      {{4, 33}, 65, DType::kInt8, -1000, false},
      {{1, 768}, 768, DType::kUInt8, -1000, true},
      {{9, 96}, 40, DType::kUInt8, 121, true, DType::kUInt8, 83},   // uint8 weights, asymmetric
      {{9, 96}, 40, DType::kUInt8, 7, false, DType::kUInt8, 0},     // uint8 weights, no zero point
      {{4, 50}, 30, DType::kInt8, -9, true, DType::kInt8, -7},      // int8 weights, asymmetric
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("A " + shape_to_string(c.a) + " N " + std::to_string(c.N) + " zp " + std::to_string(c.a_zp));
    const int64_t K = c.a.back();
    const Tensor a = random_bytes(c.at, c.a, 1);
    const Tensor b = random_bytes(c.bt, {K, c.N}, 2);
    Tensor bz;
    if (c.b_zero_input)
      bz = c.b_zp != 0 ? byte_scalar(c.bt, c.b_zp) : vec<int8_t>(std::vector<int8_t>(static_cast<size_t>(c.N), 0));
    std::vector<Tensor> in = {a, b, c.a_zp == -1000 ? Tensor() : byte_scalar(c.at, c.a_zp), bz};
    std::vector<Tensor> constants = {Tensor(), b, Tensor(), in[3]};
    NodeRunner ref("MatMulInteger", "", 10, {}, Device::ref, {}, c.at);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      NodeRunner cpu("MatMulInteger", "", 10, {}, Device::cpu, constants, c.at);
      ASSERT_TRUE(cpu.found());
      ASSERT_TRUE(cpu.prepare_status().ok()) << cpu.prepare_status().to_string();
      const int64_t before = cpu::int8_matmuls_built();
      for (int rep = 0; rep < 2; ++rep) {  // the second run reuses the cached primitive
        auto got = cpu.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        EXPECT_TRUE(int32_equal(*got, *want));
      }
      if (cpu::int8_vnni_available())
        EXPECT_EQ(cpu::int8_matmuls_built(), before + 1) << "the int8 primitive did not run once";
      else
        EXPECT_EQ(cpu::int8_matmuls_built(), before);
    }
  }
}

TEST(CpuMatMulInteger, FormsThePrimitiveDoesNotTakeRunOnTheReference) {
  const Tensor a = random_bytes(DType::kUInt8, {6, 20}, 3);
  const Tensor b = random_bytes(DType::kInt8, {20, 9}, 4);
  const Tensor a_zp = byte_scalar(DType::kUInt8, 77);
  NodeRunner ref("MatMulInteger", "", 10, {}, Device::ref, {}, DType::kUInt8);
  struct Form {
    const char* what;
    std::vector<Tensor> in, constants;
  };
  std::vector<int8_t> bz(9, 0);
  bz[4] = 3;
  std::vector<uint8_t> per_row(6, 10);
  per_row[2] = 200;
  const std::vector<Form> forms = {
      {"non-zero b_zero_point", {a, b, a_zp, vec<int8_t>(bz)}, {Tensor(), b, Tensor(), vec<int8_t>(bz)}},
      {"B not a constant", {a, b, a_zp}, {}},
      {"per-row a_zero_point", {a, b, vec<uint8_t>(per_row)}, {Tensor(), b}},
  };
  for (const auto& f : forms) {
    SCOPED_TRACE(f.what);
    auto want = ref.run(f.in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    NodeRunner cpu("MatMulInteger", "", 10, {}, Device::cpu, f.constants, DType::kUInt8);
    const int64_t before = cpu::int8_matmuls_built();
    auto got = cpu.run(f.in);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    EXPECT_TRUE(int32_equal(*got, *want));
    EXPECT_EQ(cpu::int8_matmuls_built(), before);
  }
  // A mismatched inner dimension is an error naming the operands, on the fast path's node too.
  NodeRunner cpu("MatMulInteger", "", 10, {}, Device::cpu, {Tensor(), b}, DType::kUInt8);
  auto r = cpu.run({random_bytes(DType::kUInt8, {6, 21}, 5), b, a_zp});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("21"), std::string::npos) << r.status().to_string();
}

TEST(CpuMatMulInteger, ToFloatEqualsTheReference) {
  static ThreadPool pool2(2);
  struct ToFloatCase {
    Shape a;
    int64_t N;
    bool per_column, bias;
    std::string act;
  };
  const std::vector<ToFloatCase> cases = {
      {{1, 128, 384}, 1536, false, true, ""}, {{2, 7, 37}, 19, true, true, ""}, {{5, 64}, 48, false, false, ""},
      {{3, 33}, 65, true, false, ""}, {{1, 24, 384}, 1536, false, true, "Gelu"}, {{6, 40}, 24, true, true, "GeluTanh"},
      {{6, 40}, 24, false, true, "Relu"}};
  for (const auto& c : cases) {
    SCOPED_TRACE("A " + shape_to_string(c.a) + " N " + std::to_string(c.N) + (c.per_column ? " per-column" : "") +
                 (c.bias ? " bias " : " ") + c.act);
    Attrs attrs;
    if (!c.act.empty()) attrs["activation"] = string_attr(c.act);
    const int64_t K = c.a.back();
    const Tensor a = random_bytes(DType::kUInt8, c.a, 11);
    const Tensor b = random_bytes(DType::kInt8, {K, c.N}, 12);
    std::vector<float> sv;
    // Scales that bring the sums to about [-4, 4], where the Gelus bend.
    for (int64_t j = 0; j < (c.per_column ? c.N : 1); ++j)
      sv.push_back((3e-5f + 1e-6f * static_cast<float>(j % 13)) * 384.0f / static_cast<float>(K));
    const Tensor bias = c.bias ? random_tensor({c.N}, 13) : Tensor();
    const std::vector<Tensor> in = {a, b, byte_scalar(DType::kUInt8, 119), vec<int8_t>({0}), fvec(sv), bias};
    const std::vector<Tensor> constants = {Tensor(), b, Tensor(), in[3], Tensor(), bias};
    NodeRunner ref("MatMulIntegerToFloat", "com.osprey", 1, attrs, Device::ref, {}, DType::kUInt8);
    auto want = ref.run(in);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      NodeRunner cpu("MatMulIntegerToFloat", "com.osprey", 1, attrs, Device::cpu, constants, DType::kUInt8);
      ASSERT_TRUE(cpu.found());
      const int64_t before = cpu::int8_matmuls_built();
      auto got = cpu.run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      if (c.act.rfind("Gelu", 0) == 0)  // oneDNN's Gelu formulas: within float rounding
        expect_close(*got, *want, 2e-6);
      else
        EXPECT_TRUE(bit_equal(*got, *want));
      EXPECT_EQ(cpu::int8_matmuls_built(), before + (cpu::int8_vnni_available() ? 1 : 0));
    }
  }
  // A bias that is not a constant, and a scale of the wrong count: the reference's result and
  // error.
  const Tensor a = random_bytes(DType::kUInt8, {4, 8}, 14), b = random_bytes(DType::kInt8, {8, 6}, 15);
  const Tensor bias = random_tensor({6}, 16);
  NodeRunner ref("MatMulIntegerToFloat", "com.osprey", 1, {}, Device::ref, {}, DType::kUInt8);
  NodeRunner cpu("MatMulIntegerToFloat", "com.osprey", 1, {}, Device::cpu, {Tensor(), b}, DType::kUInt8);
  const std::vector<Tensor> in = {a, b, byte_scalar(DType::kUInt8, 3), Tensor(), fvec({0.01f}), bias};
  auto want = ref.run(in);
  auto got = cpu.run(in);
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_TRUE(bit_equal(*got, *want));
  auto bad = cpu.run({a, b, byte_scalar(DType::kUInt8, 3), Tensor(), fvec({0.1f, 0.2f})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().to_string().find("scale"), std::string::npos) << bad.status().to_string();
  NodeRunner sig("MatMulIntegerToFloat", "com.osprey", 1, {{"activation", string_attr("Sigmoid")}}, Device::cpu,
                 {Tensor(), b}, DType::kUInt8);
  auto unknown = sig.run(in);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().to_string().find("Sigmoid"), std::string::npos) << unknown.status().to_string();
}

TEST(CpuMatMulInteger, QuantizedOutputEqualsTheReference) {
  static ThreadPool pool2(2);
  struct QCase {
    Shape a;
    int64_t N;
    bool per_column, bias, relu;
    DType y_type;
    int y_zp;
  };
  const std::vector<QCase> cases = {{{1, 64, 384}, 384, false, false, false, DType::kUInt8, 109},
                                    {{2, 7, 37}, 19, true, true, false, DType::kUInt8, 3},
                                    {{5, 64}, 48, false, true, true, DType::kInt8, -20},
                                    {{3, 96}, 40, true, false, false, DType::kInt8, 0}};
  for (const auto& c : cases) {
    SCOPED_TRACE("A " + shape_to_string(c.a) + " N " + std::to_string(c.N) + (c.per_column ? " per-column" : "") +
                 (c.bias ? " bias" : "") + (c.relu ? " Relu " : " ") + dtype_name(c.y_type));
    Attrs attrs;
    if (c.relu) attrs["activation"] = string_attr("Relu");
    const int64_t K = c.a.back();
    const Tensor a = random_bytes(DType::kUInt8, c.a, 21);
    const Tensor b = random_bytes(DType::kInt8, {K, c.N}, 22);
    std::vector<float> sv;
    for (int64_t j = 0; j < (c.per_column ? c.N : 1); ++j) sv.push_back(0.0004f + 0.00001f * static_cast<float>(j % 7));
    const Tensor bias = c.bias ? random_tensor({c.N}, 23) : Tensor();
    // y_scale 0.125 with a scale of 2^-10 and no bias: sum * 2^-7 exactly, so every sum that is
    // 64 modulo 128 lands on a tie (rounded to even).
    for (float y_scale : {0.0731f, 0.125f}) {
      const bool ties = y_scale == 0.125f && !c.bias;
      const Tensor ys = fvec({y_scale}), yz = byte_scalar(c.y_type, c.y_zp);
      const Tensor scale = ties ? fvec(std::vector<float>(sv.size(), 0.0009765625f)) : fvec(sv);
      const std::vector<Tensor> in = {a, b, byte_scalar(DType::kUInt8, 119), vec<int8_t>({0}), scale, bias, ys, yz};
      const std::vector<Tensor> constants = {Tensor(), b, Tensor(), in[3], Tensor(), bias, ys, yz};
      NodeRunner ref("MatMulIntegerToFloat", "com.osprey", 1, attrs, Device::ref, {}, DType::kUInt8);
      auto want = ref.run(in);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      ASSERT_EQ(want->dtype(), c.y_type);
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        NodeRunner cpu("MatMulIntegerToFloat", "com.osprey", 1, attrs, Device::cpu, constants, DType::kUInt8);
        const int64_t before = cpu::int8_matmuls_built();
        auto got = cpu.run(in, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        ASSERT_EQ(got->dtype(), c.y_type);
        ASSERT_EQ(got->nbytes(), want->nbytes());
        int64_t differ = 0;
        for (size_t i = 0; i < got->nbytes(); ++i)
          differ += static_cast<const uint8_t*>(got->raw_data())[i] != static_cast<const uint8_t*>(want->raw_data())[i];
        EXPECT_EQ(differ, 0) << "y_scale " << y_scale;
        EXPECT_EQ(cpu::int8_matmuls_built(), before + (cpu::int8_vnni_available() ? 1 : 0));
      }
    }
  }
}

}  // namespace
}  // namespace osprey::testing
