// matmul_integer_fusion: a dynamically quantized product, MatMulInteger -> Cast(float) ->
// Mul(scale) [-> Add(bias)], becomes one com.osprey MatMulIntegerToFloat computing the same
// operations in the same order. Per-tensor and per-column scales, with and without a bias, and
// an activation after them; a non-constant bias stays a separate Add; shared intermediates keep
// the graph as it is. A QuantizeLinear after the fused product folds into it (the bytes out).
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

constexpr int64_t kK = 16, kN = 12;

struct Form {
  bool per_column = false;
  bool bias = true;           // a constant bias [N]
  bool input_bias = false;    // a bias from a graph input (not a constant)
  bool shared_cast = false;   // the Cast's output is also a graph output
  bool relu = false;          // a Relu after the product
};

// x [2, 5, K] -> DynamicQuantizeLinear -> MatMulInteger(W int8 [K, N]) -> Cast -> Mul(x_scale *
// w_scale) [-> Add(bias)] -> y.
ModelBuilder dynamic_product(const Form& f) {
  ModelBuilder m(13);
  m.input("x", kF, {2, 5, kK}).output("y");
  if (f.input_bias) m.input("b", kF, {kN});
  if (f.shared_cast) m.output("yf");
  std::vector<int> w;
  for (int64_t i = 0; i < kK * kN; ++i) w.push_back(static_cast<int>((i * 37) % 255) - 127);
  typed_initializer(m, "w", onnx::TensorProto::INT8, {kK, kN}, w);
  typed_initializer(m, "wz", onnx::TensorProto::INT8, {}, {0});
  std::vector<float> ws;
  for (int64_t j = 0; j < (f.per_column ? kN : 1); ++j) ws.push_back(0.01f + 0.002f * static_cast<float>(j));
  m.initializer("ws", f.per_column ? std::vector<int64_t>{kN} : std::vector<int64_t>{}, ws);
  m.initializer("bias", {kN}, cyclic_values(kN, -0.5f, 0.13f, 7));
  m.node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  m.node("MatMulInteger", {"xq", "w", "xz", "wz"}, {"acc"});
  auto& cast = m.node("Cast", {"acc"}, {"yf"});
  auto* to = cast.add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  m.node("Mul", {"xs", "ws"}, {"s"});
  const bool add = f.bias || f.input_bias;
  const std::string last = f.relu ? "yr" : "y";
  m.node("Mul", {"yf", "s"}, {add ? "ys" : last});
  if (add) m.node("Add", {f.input_bias ? "b" : "bias", "ys"}, {last});
  if (f.relu) m.node("Relu", {"yr"}, {"y"});
  return m;
}

std::vector<NamedTensor> inputs(const Form& f) {
  std::vector<NamedTensor> in = {{"x", ramp({2, 5, kK}, -1.3f, 0.0171f)}};
  if (f.input_bias) in.push_back({"b", ramp({kN}, 0.2f, -0.05f)});
  return in;
}

TEST(MatMulIntegerFusionTest, DynamicProductsBecomeOneNode) {
  for (bool per_column : {false, true})
    for (bool bias : {true, false}) {
      SCOPED_TRACE(std::string(per_column ? "per-column" : "per-tensor") + (bias ? " bias" : ""));
      Form f;
      f.per_column = per_column;
      f.bias = bias;
      ModelBuilder m = dynamic_product(f);
      auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_integer_fusion()), inputs(f));
      ASSERT_TRUE(g);
      const std::string d = dump_graph(*g);
      EXPECT_EQ(count_op(*g, "com.osprey.MatMulIntegerToFloat"), 1) << d;
      EXPECT_EQ(count_op(*g, "MatMulInteger") + count_op(*g, "Cast") + count_op(*g, "Add"), 0) << d;
      EXPECT_EQ(count_op(*g, "Mul"), 1) << d;  // the scales' product stays
      expect_session_levels_agree(m.bytes(), inputs(f), 2);
    }
}

TEST(MatMulIntegerFusionTest, AnActivationAfterTheProductJoinsIt) {
  Form f;
  f.relu = true;
  ModelBuilder m = dynamic_product(f);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_integer_fusion()), inputs(f));
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.MatMulIntegerToFloat"), 1) << d;
  EXPECT_EQ(count_op(*g, "Relu"), 0) << d;
  EXPECT_NE(d.find("activation=\"Relu\""), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), inputs(f), 2);
}

TEST(MatMulIntegerFusionTest, NonConstantBiasAndSharedValuesStay) {
  {  // the Add of a bias that is not a constant stays after the fused product
    Form f;
    f.bias = false;
    f.input_bias = true;
    ModelBuilder m = dynamic_product(f);
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_integer_fusion()), inputs(f));
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.MatMulIntegerToFloat"), 1) << dump_graph(*g);
    EXPECT_EQ(count_op(*g, "Add"), 1) << dump_graph(*g);
  }
  {  // the int32 product's float copy is read elsewhere: nothing is fused
    Form f;
    f.shared_cast = true;
    ModelBuilder m = dynamic_product(f);
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_integer_fusion()), inputs(f));
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.MatMulIntegerToFloat"), 0) << dump_graph(*g);
    EXPECT_EQ(count_op(*g, "MatMulInteger"), 1) << dump_graph(*g);
  }
}

TEST(MatMulIntegerFusionTest, AQuantizeLinearAfterTheProductFoldsIn) {
  for (bool zero_point : {true, false}) {
    SCOPED_TRACE(zero_point ? "with y_zero_point" : "without");
    Form f;
    ModelBuilder m = dynamic_product(f);
    // y -> QuantizeLinear(0.05, 97) -> yq, the graph's output.
    auto* g = m.proto().mutable_graph();
    g->mutable_output(0)->set_name("yq");
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::UINT8);
    m.initializer("q_scale", {}, {0.05f});
    typed_initializer(m, "q_zero", onnx::TensorProto::UINT8, {}, {97});
    std::vector<std::string> q = {"y", "q_scale"};
    if (zero_point) q.push_back("q_zero");
    m.node("QuantizeLinear", q, {"yq"});
    std::vector<std::unique_ptr<Pass>> passes;
    passes.push_back(make_matmul_integer_fusion());
    auto before = import_graph(m.bytes());
    auto after = optimized_graph(m.bytes(), std::move(passes));
    ASSERT_TRUE(before && after);
    const std::string d = dump_graph(*after);
    EXPECT_EQ(count_op(*after, "com.osprey.MatMulIntegerToFloat"), 1) << d;
    EXPECT_EQ(count_op(*after, "QuantizeLinear"), 0) << d;
    const Tensor want = run_graph(*before, inputs(f))[0], got = run_graph(*after, inputs(f))[0];
    ASSERT_EQ(got.dtype(), DType::kUInt8);
    ASSERT_EQ(want.shape(), got.shape());
    for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(want.data<uint8_t>()[i], got.data<uint8_t>()[i]) << i;
    expect_session_levels_agree(m.bytes(), inputs(f), 2);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
