// matmul_add_fusion: MatMul + bias Add (+ residual Add) (+ activation) and Gemm ->
// com.osprey FusedMatMul; products that do not fit the contract stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 9);
  return v;
}

onnx::AttributeProto attr_i(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

onnx::AttributeProto attr_f(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

TEST(MatMulAddFusionTest, BiasResidualAndActivationBecomeOneNode) {
  // BERT's output projection: x[N,S,6] . W[6,6] + b, + x, then (here) Relu.
  ModelBuilder m;
  m.input("x", kF, {-1, -1, 6}).output("y");
  m.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("seq");
  m.initializer("W", {6, 6}, values(36, -0.4f, 0.11f));
  m.initializer("b", {6}, values(6, 0.2f, -0.1f));
  m.node("MatMul", {"x", "W"}, {"mm"}, "proj");
  m.node("Add", {"b", "mm"}, {"biased"});
  m.node("Add", {"biased", "x"}, {"res"});
  m.node("Relu", {"res"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3, 6})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_add_fusion()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("com.osprey.FusedMatMul 'proj': x, W, b, x -> y  activation=\"Relu\""),
            std::string::npos)
      << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(MatMulAddFusionTest, ResidualThroughPositionEmbeddingSlice) {
  // BERT's embeddings: x[N, S, 6] + pos[:S] (a Slice ending at Shape(x)[1]), then a projection
  // with that sum as its residual. The sum has x's shape in every run that succeeds.
  ModelBuilder m;
  m.input("x", kF, {-1, -1, 6}).output("y");
  m.proto()
      .mutable_graph()
      ->mutable_input(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(1)
      ->set_dim_param("seq");
  m.initializer("pos", {8, 6}, values(48, -0.5f, 0.1f));
  m.node("Shape", {"x"}, {"shape"});
  int64_initializer(m, "one", {}, {1});
  int64_initializer(m, "zeros", {1}, {0});
  m.node("Gather", {"shape", "one"}, {"seq"});
  m.node("Unsqueeze", {"seq", "zeros"}, {"end"});
  m.node("Slice", {"pos", "zeros", "end", "zeros"}, {"p"});
  m.node("Unsqueeze", {"p", "zeros"}, {"p3"});
  m.node("Add", {"x", "p3"}, {"e"});
  m.initializer("W", {6, 6}, values(36, -0.4f, 0.11f));
  m.initializer("b", {6}, values(6, 0.2f, -0.1f));
  m.node("MatMul", {"e", "W"}, {"mm"}, "proj");
  m.node("Add", {"mm", "b"}, {"biased"});
  m.node("Add", {"e", "biased"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 5, 6})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_add_fusion()), in);
  ASSERT_TRUE(g);
  EXPECT_NE(dump_graph(*g).find("FusedMatMul 'proj': e, W, b, e -> y"), std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(MatMulAddFusionTest, GemmWithTransposedBAndRowBias) {
  ModelBuilder m;
  m.input("x", kF, {-1, 4}).output("y");
  m.initializer("W", {3, 4}, values(12, 0.3f, -0.13f));
  m.initializer("C", {1, 3}, {0.5f, -0.5f, 0.25f});
  auto& gemm = m.node("Gemm", {"x", "W", "C"}, {"g"}, "fc");
  gemm.add_attribute()->CopyFrom(attr_i("transB", 1));
  m.initializer("lo", {}, {-0.5f});
  m.initializer("hi", {}, {0.5f});
  m.node("Clip", {"g", "lo", "hi"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({5, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_add_fusion()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("FusedMatMul 'fc': x, W, C_flat, \"\" -> y  activation=\"Clip\"  "
                   "activation_params=[-0.5,0.5]  trans_b=1"),
            std::string::npos)
      << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(MatMulAddFusionTest, LeavesScaledGemmNonConstantWeightsAndBroadcastResiduals) {
  ModelBuilder m;
  m.input("x", kF, {2, 4}).input("w", kF, {4, 3}).input("r", kF, {1, 3});
  m.output("a").output("b").output("c");
  m.initializer("W", {4, 3}, values(12, 0.3f, -0.13f));
  m.node("Gemm", {"x", "W"}, {"a"}).add_attribute()->CopyFrom(attr_f("alpha", 2.0f));
  m.initializer("bias", {3}, {1, 2, 3});
  m.node("MatMul", {"x", "w"}, {"wm"});
  m.node("Add", {"wm", "bias"}, {"b"});  // w is not a constant
  m.node("MatMul", {"x", "W"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"mb"});
  m.node("Add", {"mb", "r"}, {"c"});  // r broadcasts: not a residual
  const std::vector<NamedTensor> in = {
      {"x", ramp({2, 4})}, {"w", ramp({4, 3})}, {"r", ramp({1, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_matmul_add_fusion()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Gemm"), 1);
  EXPECT_EQ(count_op(*g, "MatMul"), 1);
  EXPECT_EQ(count_op(*g, "com.osprey.FusedMatMul"), 1);
  EXPECT_EQ(count_op(*g, "Add"), 2) << dump_graph(*g);
}

}  // namespace
}  // namespace osprey::passes::testing
