// constant_folding: constant subexpressions become initializers; random ops, overridable
// initializers, oversized results and failing nodes are left alone.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

onnx::AttributeProto ints_attr(const std::string& name, std::vector<int64_t> v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a.add_ints(x);
  return a;
}

TEST(ConstantFoldingTest, FoldsConstantChainIntoInitializer) {
  ModelBuilder m;
  m.input("x", kF, {-1, 3}).output("y");
  m.initializer("W", {2, 3}, {1, 2, 3, 4, 5, 6});
  m.node("Transpose", {"W"}, {"Wt"}).add_attribute()->CopyFrom(ints_attr("perm", {1, 0}));
  m.node("Neg", {"Wt"}, {"Wn"});
  m.node("MatMul", {"x", "Wn"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({4, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_constant_folding()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].op_type, "MatMul");
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("initializer Wn: float32[3,2]{-1,-4,-2,-5,-3,-6}"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in);
}

TEST(ConstantFoldingTest, FoldsConstantNodesAndStaticShapeOfInputs) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).input("v", kF, {-1, 3}).output("y").output("s", kI64).output("sv", kI64);
  auto& c = m.node("Constant", {}, {"k"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  a->mutable_t()->add_float_data(2.5f);
  m.node("Mul", {"x", "k"}, {"y"});
  m.node("Shape", {"x"}, {"s"});   // [2,3]: static, folded
  m.node("Shape", {"v"}, {"sv"});  // [N,3]: kept
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}, {"v", ramp({5, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_constant_folding()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Constant"), 0);
  EXPECT_EQ(count_op(*g, "Shape"), 1);
  EXPECT_EQ(g->nodes.size(), 2u);
  EXPECT_NE(dump_graph(*g).find("initializer s: int64[2]{2,3}"), std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(ConstantFoldingTest, LeavesRandomOpsAndOverridableInitializers) {
  ModelBuilder m;
  m.input("x", kF, {2}).input("b", kF, {2}).output("y").output("r");
  m.initializer("b", {2}, {1, 2});  // an input with a default: the caller may override it
  m.node("Neg", {"b"}, {"nb"});
  m.node("Add", {"x", "nb"}, {"y"});
  auto& r = m.node("RandomUniform", {}, {"r"});
  r.add_attribute()->CopyFrom(ints_attr("shape", {2}));
  auto g = optimized_graph(m.bytes(), pass_list(make_constant_folding()));
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes.size(), 3u);
  // Overriding the default still works after optimization.
  SessionOptions o;
  auto s = Session::load_from_bytes(m.bytes(), o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = (*s)->run({{"x", ramp({2}, 0.0f, 0.0f)}, {"b", ramp({2}, 10.0f, 1.0f)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  EXPECT_EQ((*out)[0].second.data<float>()[0], -10.0f);
  EXPECT_EQ((*out)[0].second.data<float>()[1], -11.0f);
}

TEST(ConstantFoldingTest, CapsFoldedSizeAndLeavesFailuresForRunTime) {
  ModelBuilder m;
  m.input("x", kF, {4, 4}).output("y").output("big").output("z");
  int64_initializer(m, "small_shape", {2}, {4, 4});
  int64_initializer(m, "big_shape", {2}, {2048, 1024});  // 2M elements from 2: not folded
  int64_initializer(m, "bad_shape", {1}, {7});
  m.initializer("one", {}, {1.0f});
  auto fill = [] {
    onnx::AttributeProto a;
    a.set_name("value");
    a.set_type(onnx::AttributeProto::TENSOR);
    a.mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a.mutable_t()->add_dims(1);
    a.mutable_t()->add_float_data(0.5f);
    return a;
  };
  m.node("ConstantOfShape", {"small_shape"}, {"half"}).add_attribute()->CopyFrom(fill());
  m.node("Add", {"x", "half"}, {"y"});
  m.node("ConstantOfShape", {"big_shape"}, {"big"}).add_attribute()->CopyFrom(fill());
  m.node("Reshape", {"one", "bad_shape"}, {"z"});  // fails: left for run time
  auto g = optimized_graph(m.bytes(), pass_list(make_constant_folding()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "ConstantOfShape"), 1);
  EXPECT_EQ(count_op(*g, "Reshape"), 1);
  EXPECT_EQ(g->nodes.size(), 3u);
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = (*s)->run({{"x", ramp({4, 4})}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("Reshape"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace osprey::passes::testing
