// compute_precision = "bf16" on the oneDNN Conv / FusedConv / MatMul / FusedMatMul / Gemm (and the
// bfloat16 activations between fast-mode convolutions and between FusedMatMuls): the
// result stays within bf16 rounding of the float32 reference, and it really is computed in
// bf16 (it differs from the float32 fast kernel's result, which a silent float32 fallback
// would reproduce). Prepared (constant weights) and unprepared, 1 and 2 threads.
// On a CPU without native bf16 these tests are skipped with the reason: the session refuses
// fast mode there (see session_precision_test.cc), so the kernels never see the attribute.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"
#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/matmul_core.h"

namespace osprey::testing {
namespace {

// bf16 keeps 8 significant bits: each operand is off by up to 2^-9 relative, so a K-term dot
// product of values in [-1, 1) is off by well under 1% of the output's scale.
constexpr double kBf16Tol = 1.5e-2;

double max_abs_diff(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::fabs(static_cast<double>(a.data<float>()[i]) - b.data<float>()[i]));
  return worst;
}

// Runs `op` in bf16 (prepared with `constant_index` constant when >= 0, and unprepared) and in
// float32 on the fast kernel, and checks both against the reference.
void check_bf16(const std::string& op, const std::string& domain, Attrs attrs,
                const std::vector<Tensor>& in, int constant_index) {
  if (!cpu::bf16_compute_available())
    GTEST_SKIP() << "no native bf16 here (oneDNN offers '" << cpu::bf16_probe_implementation() << "')";
  static ThreadPool pool2(2);
  const int opset = domain.empty() ? 13 : 1;
  NodeRunner ref(op, domain, opset, attrs, Device::ref);
  auto want = ref.run(in);
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  NodeRunner exact(op, domain, opset, attrs, Device::cpu);
  auto f32 = exact.run(in);
  ASSERT_TRUE(f32.ok()) << f32.status().to_string();
  expect_close(*f32, *want);

  attrs["compute_precision"] = string_attr("bf16");
  std::vector<Tensor> constants(in.size());
  if (constant_index >= 0) constants[static_cast<size_t>(constant_index)] = in[static_cast<size_t>(constant_index)];
  NodeRunner prepared(op, domain, opset, attrs, Device::cpu, constants);
  NodeRunner unprepared(op, domain, opset, attrs, Device::cpu);
  ASSERT_TRUE(prepared.found());
  ASSERT_TRUE(prepared.prepare_status().ok()) << prepared.prepare_status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run(in, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *want, kBf16Tol);
      // bf16 rounding shows: a float32 computation would agree with `f32` to ~1e-6.
      EXPECT_GT(max_abs_diff(*got, *f32), 1e-4) << op << ": the bf16 result equals float32's";
    }
}

TEST(CpuBf16, ConvNchwAndGrouped) {
  check_bf16("Conv", "", {{"pads", ints_attr({1, 1, 1, 1})}},
             {random_tensor({1, 16, 9, 9}, 1), random_tensor({24, 16, 3, 3}, 2), random_tensor({24}, 3)}, 1);
  check_bf16("Conv", "", {{"group", int_attr(4)}, {"strides", ints_attr({2, 2})}},
             {random_tensor({2, 16, 10, 10}, 4), random_tensor({32, 4, 3, 3}, 5)}, 1);
}

TEST(CpuBf16, ChannelsLastFusedConvWithResidualAndActivation) {
  // NHWC X [1, 8, 8, 32], W [32, 32, 1, 1], Z [1, 8, 8, 32], Relu.
  const Attrs attrs = {{"channels_last", int_attr(1)}, {"activation", string_attr("Relu")}};
  check_bf16("FusedConv", "com.osprey", attrs,
             {random_tensor({1, 8, 8, 32}, 6), random_tensor({32, 32, 1, 1}, 7), random_tensor({32}, 8),
              random_tensor({1, 8, 8, 32}, 9)},
             1);
  // Depthwise 3x3, channels-last, on oneDNN's bf16 kernel (the depthwise form keeps float32
  // weights and does not round a float32 X: cpu_conv_depthwise_test.cc checks it).
  cpu::DepthwisePolicyScope onednn(cpu::TapPolicy::kNever);
  check_bf16("FusedConv", "com.osprey",
             {{"channels_last", int_attr(1)}, {"group", int_attr(32)}, {"pads", ints_attr({1, 1, 1, 1})}},
             {random_tensor({1, 7, 7, 32}, 10), random_tensor({32, 1, 3, 3}, 11)}, 1);
}

TEST(CpuBf16, MatMulConstantAndComputedB) {
  check_bf16("MatMul", "", {}, {random_tensor({2, 12, 64}, 12), random_tensor({64, 48}, 13)}, 1);
  // Attention-like batched product: B computed, one product per batch.
  check_bf16("MatMul", "", {}, {random_tensor({2, 3, 16, 32}, 14), random_tensor({2, 3, 32, 16}, 15)}, -1);
}

TEST(CpuBf16, GemmAndFusedMatMul) {
  check_bf16("Gemm", "", {{"transA", int_attr(1)}, {"transB", int_attr(1)}, {"alpha", float_attr(0.5f)}, {"beta", float_attr(2.0f)}},
             {random_tensor({40, 9}, 16), random_tensor({33, 40}, 17), random_tensor({9, 33}, 18)}, 1);
  check_bf16("FusedMatMul", "com.osprey", {{"activation", string_attr("Relu")}},
             {random_tensor({5, 96}, 19), random_tensor({96, 40}, 20), random_tensor({40}, 21)}, 1);
}

// bf16_input / bf16_output: X (and Z, Y) stay bfloat16 between fast-mode convolutions. The
// oracle is the float32 reference on the same (bf16-representable) values; Y is bf16-rounded.
void check_bf16_io(Attrs attrs, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z,
                   bool bf16_x, bool bf16_y) {
  if (!cpu::bf16_compute_available())
    GTEST_SKIP() << "no native bf16 here (oneDNN offers '" << cpu::bf16_probe_implementation() << "')";
  const Tensor xr = widened_to_f32(rounded_to_bf16(x)), zr = z.defined() ? widened_to_f32(rounded_to_bf16(z)) : Tensor();
  NodeRunner ref("FusedConv", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({xr, w, b, zr});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  attrs["compute_precision"] = string_attr("bf16");
  attrs["bf16_input"] = int_attr(bf16_x ? 1 : 0);
  attrs["bf16_output"] = int_attr(bf16_y ? 1 : 0);
  static ThreadPool pool2(2);
  NodeRunner prepared("FusedConv", "com.osprey", 1, attrs, Device::cpu, {Tensor(), w});
  NodeRunner unprepared("FusedConv", "com.osprey", 1, attrs, Device::cpu);
  ASSERT_TRUE(prepared.prepare_status().ok()) << prepared.prepare_status().to_string();
  const Tensor xin = bf16_x ? rounded_to_bf16(x) : xr;
  const Tensor zin = !z.defined() ? Tensor() : bf16_y ? rounded_to_bf16(z) : zr;
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run({xin, w, b, zin}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ(got->dtype(), bf16_y ? DType::kBFloat16 : DType::kFloat32);
      expect_close(bf16_y ? widened_to_f32(*got) : *got, *want, kBf16Tol);
    }
}

TEST(CpuBf16, FusedConvTakesAndGivesBf16Activations) {
  const Attrs cl = {{"channels_last", int_attr(1)}, {"activation", string_attr("Relu")}};
  const Tensor x = random_tensor({1, 8, 8, 32}, 30), w = random_tensor({48, 32, 1, 1}, 31),
               b = random_tensor({48}, 32), z = random_tensor({1, 8, 8, 48}, 33);
  check_bf16_io(cl, x, w, b, z, true, true);    // bf16 in, bf16 out, bf16 residual
  check_bf16_io(cl, x, w, b, z, false, true);   // float32 in, bf16 out
  check_bf16_io(cl, x, w, b, z, true, false);   // bf16 in, float32 out and residual
  check_bf16_io(cl, x, w, b, Tensor(), true, true);
  // Depthwise 3x3 stride 2, channels-last, and an NCHW convolution (reordered around).
  check_bf16_io({{"channels_last", int_attr(1)}, {"group", int_attr(32)}, {"strides", ints_attr({2, 2})},
                 {"pads", ints_attr({1, 1, 1, 1})}, {"activation", string_attr("Clip")},
                 {"activation_params", floats_attr({0.0f, 6.0f})}},
                random_tensor({1, 9, 9, 32}, 34), random_tensor({32, 1, 3, 3}, 35), random_tensor({32}, 36),
                Tensor(), true, true);
  check_bf16_io({{"pads", ints_attr({1, 1, 1, 1})}}, random_tensor({1, 16, 7, 7}, 37),
                random_tensor({24, 16, 3, 3}, 38), Tensor(), random_tensor({1, 24, 7, 7}, 39), true, true);
  // A strided 1x1 (ResNet's downsample).
  check_bf16_io({{"channels_last", int_attr(1)}, {"strides", ints_attr({2, 2})}},
                random_tensor({2, 9, 7, 32}, 43), random_tensor({40, 32, 1, 1}, 44), random_tensor({40}, 45),
                random_tensor({2, 5, 4, 40}, 46), true, true);
}

TEST(CpuBf16, Bf16ActivationsAreCheckedAgainstTheAttributes) {
  const Tensor x = random_tensor({1, 4, 4, 8}, 40), w = random_tensor({8, 8, 1, 1}, 41);
  Attrs a = {{"channels_last", int_attr(1)}, {"compute_precision", string_attr("bf16")},
             {"bf16_input", int_attr(1)}, {"bf16_output", int_attr(1)}};
  NodeRunner r("FusedConv", "com.osprey", 1, a, Device::cpu);
  auto got = r.run({x, w});  // X float32 although bf16_input = 1
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("X must be a bfloat16 tensor (bf16_input = 1)"), std::string::npos)
      << got.status().to_string();
  got = r.run({rounded_to_bf16(x), w, Tensor(), random_tensor({1, 4, 4, 8}, 42)});  // Z float32, Y bf16
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("residual Z must be a bfloat16 tensor (bf16_output = 1)"),
            std::string::npos)
      << got.status().to_string();
  a["compute_precision"] = string_attr("fp32");
  NodeRunner exact("FusedConv", "com.osprey", 1, a, Device::cpu);
  got = exact.run({rounded_to_bf16(x), w});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("bf16_input = 1 needs compute_precision = \"bf16\""),
            std::string::npos)
      << got.status().to_string();
}

// FusedMatMul's bf16_input / bf16_output: A bfloat16 in (no per-run conversion), Y bfloat16
// out, between fast-mode products. The oracle is the float32 reference on the same
// bf16-representable A; Y is bf16-rounded.
void check_matmul_bf16_io(Attrs attrs, const Tensor& a, const Tensor& b, const Tensor& bias, bool bf16_a,
                          bool bf16_y) {
  if (!cpu::bf16_compute_available())
    GTEST_SKIP() << "no native bf16 here (oneDNN offers '" << cpu::bf16_probe_implementation() << "')";
  const Tensor ar = widened_to_f32(rounded_to_bf16(a));
  NodeRunner ref("FusedMatMul", "com.osprey", 1, attrs, Device::ref);
  auto want = ref.run({ar, b, bias});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  attrs["compute_precision"] = string_attr("bf16");
  attrs["bf16_input"] = int_attr(bf16_a ? 1 : 0);
  attrs["bf16_output"] = int_attr(bf16_y ? 1 : 0);
  static ThreadPool pool2(2);
  NodeRunner prepared("FusedMatMul", "com.osprey", 1, attrs, Device::cpu, {Tensor(), b});
  NodeRunner unprepared("FusedMatMul", "com.osprey", 1, attrs, Device::cpu);
  ASSERT_TRUE(prepared.prepare_status().ok()) << prepared.prepare_status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2})
    for (const NodeRunner* r : {&prepared, &unprepared}) {
      auto got = r->run({bf16_a ? rounded_to_bf16(a) : ar, b, bias}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      ASSERT_EQ(got->dtype(), bf16_y ? DType::kBFloat16 : DType::kFloat32);
      EXPECT_EQ(got->shape(), want->shape());
      expect_close(bf16_y ? widened_to_f32(*got) : *got, *want, kBf16Tol);
    }
}

TEST(CpuBf16, FusedMatMulTakesAndGivesBf16Activations) {
  const Attrs gelu = {{"activation", string_attr("Gelu")}};
  const Tensor a = random_tensor({2, 5, 48}, 50), b = random_tensor({48, 40}, 51), bias = random_tensor({40}, 52);
  check_matmul_bf16_io(gelu, a, b, bias, true, true);   // bf16 in, bf16 out (a feed-forward pair's first)
  check_matmul_bf16_io(gelu, a, b, bias, false, true);  // float32 in, bf16 out
  check_matmul_bf16_io({}, a, b, bias, true, false);    // bf16 in, float32 out (the pair's second)
  // B stored transposed, no bias, odd sizes, 2-D A.
  check_matmul_bf16_io({{"trans_b", int_attr(1)}}, random_tensor({7, 33}, 53), random_tensor({19, 33}, 54),
                       Tensor(), true, true);
}

TEST(CpuBf16, FusedMatMulGeluRunsAfterTheProduct) {
  // A Gelu runs as its own pass over Y (gelu_after_product), both forms, over
  // more elements than one parallel chunk: with bf16 or float32 Y, and after a residual Z.
  const Tensor a = random_tensor({70, 64}, 60), b = random_tensor({64, 97}, 61), bias = random_tensor({97}, 62);
  for (const char* form : {"Gelu", "GeluTanh"}) {
    SCOPED_TRACE(form);
    const Attrs act = {{"activation", string_attr(form)}};
    check_matmul_bf16_io(act, a, b, bias, false, true);
    check_matmul_bf16_io(act, a, b, bias, true, false);
    check_bf16("FusedMatMul", "com.osprey", act, {a, b, bias, random_tensor({70, 97}, 63)}, 1);
  }
  // Only a plain Gelu leaves the primitive, in either precision.
  cpu::MatMulState st;
  st.act.name = "GeluTanh";
  EXPECT_TRUE(cpu::gelu_after_product(st));
  st.act.name = "Gelu";
  st.bf16 = true;
  EXPECT_TRUE(cpu::gelu_after_product(st));
  st.act.affine = {2.0f, 0.5f};
  EXPECT_FALSE(cpu::gelu_after_product(st));
  st.act = {"Relu", {}, {}};
  EXPECT_FALSE(cpu::gelu_after_product(st));
}

TEST(CpuBf16, FusedMatMulBf16AttributesAreChecked) {
  const Tensor a = random_tensor({4, 8}, 55), b = random_tensor({8, 8}, 56), z = random_tensor({4, 8}, 57);
  Attrs at = {{"compute_precision", string_attr("bf16")}, {"bf16_input", int_attr(1)}};
  auto expect_error = [](const Attrs& attrs, const std::vector<Tensor>& in, const char* text) {
    NodeRunner r("FusedMatMul", "com.osprey", 1, attrs, Device::cpu);
    auto got = r.run(in);
    ASSERT_FALSE(got.ok()) << text;
    EXPECT_NE(got.status().message().find(text), std::string::npos) << got.status().to_string();
  };
  expect_error(at, {a, b}, "A must be a bfloat16 tensor (bf16_input = 1)");
  at["bf16_output"] = int_attr(1);
  expect_error(at, {rounded_to_bf16(a), b, Tensor(), z}, "bf16_output = 1 takes no residual Z");
  at["bf16_output"] = int_attr(2);
  expect_error(at, {rounded_to_bf16(a), b}, "attribute bf16_output must be 0 or 1, got 2");
  expect_error({{"compute_precision", string_attr("fp32")}, {"bf16_input", int_attr(1)}}, {rounded_to_bf16(a), b},
               "bf16_input = 1 needs compute_precision = \"bf16\"");
}

TEST(CpuBf16, UnknownComputePrecisionIsAnError) {
  NodeRunner r("MatMul", "", 13, {{"compute_precision", string_attr("fp8")}}, Device::cpu);
  ASSERT_TRUE(r.found());
  auto got = r.run({random_tensor({2, 4}, 1), random_tensor({4, 3}, 2)});
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("compute_precision must be \"fp32\" or \"bf16\", got \"fp8\""),
            std::string::npos)
      << got.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
