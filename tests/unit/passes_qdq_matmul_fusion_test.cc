// qdq_matmul_fusion: a QDQ linear layer, DequantizeLinear(x_q) x DequantizeLinear(w_q), becomes
// MatMulInteger -> Cast -> Mul(x_scale * w_scale), which the session then runs as one
// MatMulIntegerToFloat with the bias; per-tensor and per-column weight scales, weights with and
// without a zero point; a QDQ Gemm (transB, per-channel weights along axis 0, C) likewise;
// non-constant weights, per-row activation scales and a Gemm with alpha != 1 stay as they are.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

constexpr int64_t kK = 16, kN = 8;

struct Form {
  bool per_column = true;
  bool weight_zero_point = true;
  bool constant_weights = true;
};

// x [2, 3, K] -> QuantizeLinear -> DequantizeLinear -> MatMul(DequantizeLinear(w int8 [K, N]))
// -> Add(bias) -> y.
ModelBuilder qdq_linear(const Form& f) {
  ModelBuilder m(13);
  m.input("x", kF, {2, 3, kK}).output("y");
  if (!f.constant_weights) m.input("w", onnx::TensorProto::INT8, {kK, kN});
  m.initializer("xs", {}, {0.03f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {120});
  if (f.constant_weights) {
    std::vector<int> w;
    for (int64_t i = 0; i < kK * kN; ++i) w.push_back(static_cast<int>((i * 53) % 255) - 127);
    typed_initializer(m, "w", onnx::TensorProto::INT8, {kK, kN}, w);
  }
  std::vector<float> ws;
  for (int64_t j = 0; j < (f.per_column ? kN : 1); ++j) ws.push_back(0.004f + 0.001f * static_cast<float>(j));
  m.initializer("ws", f.per_column ? std::vector<int64_t>{kN} : std::vector<int64_t>{}, ws);
  std::vector<std::string> wdq = {"w", "ws"};
  if (f.weight_zero_point) {
    typed_initializer(m, "wz", onnx::TensorProto::INT8, f.per_column ? std::vector<int64_t>{kN} : std::vector<int64_t>{},
                      std::vector<int>(f.per_column ? kN : 1, 0));
    wdq.push_back("wz");
  }
  m.initializer("bias", {kN}, cyclic_values(kN, -0.3f, 0.11f, 5));
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  auto& d = m.node("DequantizeLinear", wdq, {"wd"});
  if (f.per_column) {
    auto* axis = d.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
  }
  m.node("MatMul", {"xd", "wd"}, {"p"});
  m.node("Add", {"p", "bias"}, {"y"});
  return m;
}

std::vector<NamedTensor> inputs(const Form& f) {
  std::vector<NamedTensor> in = {{"x", ramp({2, 3, kK}, -1.7f, 0.113f)}};
  if (!f.constant_weights) {
    Tensor w(DType::kInt8, {kK, kN});
    for (int64_t i = 0; i < w.numel(); ++i) w.data<int8_t>()[i] = static_cast<int8_t>((i * 29) % 200 - 100);
    in.push_back({"w", w});
  }
  return in;
}

class QdqMatMulFusionTest : public ::testing::Test {
 protected:
  void SetUp() override { force_qdq_conv_fusion(true); }  // the int8 path on every machine
  void TearDown() override { force_qdq_conv_fusion(false); }
};

TEST_F(QdqMatMulFusionTest, LinearLayersBecomeIntegerProducts) {
  for (bool per_column : {true, false})
    for (bool zero_point : {true, false}) {
      SCOPED_TRACE(std::string(per_column ? "per-column" : "per-tensor") + (zero_point ? " zp" : ""));
      Form f;
      f.per_column = per_column;
      f.weight_zero_point = zero_point;
      ModelBuilder m = qdq_linear(f);
      auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_matmul_fusion()), inputs(f));
      ASSERT_TRUE(g);
      const std::string d = dump_graph(*g);
      EXPECT_EQ(count_op(*g, "MatMulInteger"), 1) << d;
      EXPECT_EQ(count_op(*g, "MatMul"), 0) << d;
      EXPECT_EQ(count_op(*g, "Cast"), 1) << d;
      // The whole pipeline: one MatMulIntegerToFloat with the bias.
      auto full = optimized_graph(m.bytes(), []() {
        std::vector<std::unique_ptr<Pass>> v;
        v.push_back(make_qdq_matmul_fusion());
        v.push_back(make_constant_folding());
        v.push_back(make_matmul_integer_fusion());
        v.push_back(make_dead_code_elimination());
        return v;
      }());
      ASSERT_TRUE(full);
      EXPECT_EQ(count_op(*full, "com.osprey.MatMulIntegerToFloat"), 1) << dump_graph(*full);
      EXPECT_EQ(count_op(*full, "Add"), 0) << dump_graph(*full);
      expect_session_levels_agree(m.bytes(), inputs(f), 2);
    }
}

TEST_F(QdqMatMulFusionTest, NonConstantWeightsStay) {
  Form f;
  f.constant_weights = false;
  ModelBuilder m = qdq_linear(f);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_matmul_fusion()), inputs(f));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "MatMulInteger"), 0) << dump_graph(*g);
  EXPECT_EQ(count_op(*g, "MatMul"), 1) << dump_graph(*g);
}

// x [3, K] -> QuantizeLinear -> DequantizeLinear -> Gemm(., DequantizeLinear(w int8 [N, K], per
// channel along axis 0), C [N], transB = 1, alpha) -> y: a quantized CNN's classifier head.
ModelBuilder qdq_gemm(float alpha) {
  ModelBuilder m(13);
  m.input("x", kF, {3, kK}).output("y");
  m.initializer("xs", {}, {0.03f});
  typed_initializer(m, "xz", onnx::TensorProto::UINT8, {}, {120});
  std::vector<int> w;
  for (int64_t i = 0; i < kN * kK; ++i) w.push_back(static_cast<int>((i * 53) % 255) - 127);
  typed_initializer(m, "w", onnx::TensorProto::INT8, {kN, kK}, w);
  std::vector<float> ws;
  for (int64_t j = 0; j < kN; ++j) ws.push_back(0.004f + 0.001f * static_cast<float>(j));
  m.initializer("ws", {kN}, ws);
  m.initializer("c", {kN}, cyclic_values(kN, -0.3f, 0.11f, 5));
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  auto& d = m.node("DequantizeLinear", {"w", "ws"}, {"wd"});
  auto* axis = d.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  auto& gemm = m.node("Gemm", {"xd", "wd", "c"}, {"y"});
  auto* tb = gemm.add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  auto* a = gemm.add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(alpha);
  return m;
}

TEST_F(QdqMatMulFusionTest, AGemmHeadBecomesAnIntegerProduct) {
  const std::vector<NamedTensor> in = {{"x", ramp({3, kK}, -1.7f, 0.113f)}};
  ModelBuilder m = qdq_gemm(1.0f);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_matmul_fusion()), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "MatMulInteger"), 1) << d;
  EXPECT_EQ(count_op(*g, "Gemm"), 0) << d;
  EXPECT_EQ(count_op(*g, "Add"), 1) << d;  // C, after the scaling
  expect_session_levels_agree(m.bytes(), in, 2);
  // alpha != 1 is not this form.
  ModelBuilder scaled = qdq_gemm(0.5f);
  auto kept = expect_pass_preserves(scaled.bytes(), pass_list(make_qdq_matmul_fusion()), in);
  ASSERT_TRUE(kept);
  EXPECT_EQ(count_op(*kept, "Gemm"), 1) << dump_graph(*kept);
}

}  // namespace
}  // namespace osprey::passes::testing
