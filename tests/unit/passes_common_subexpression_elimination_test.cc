// common_subexpression_elimination: identical nodes merge (whole chains at once); random ops,
// nodes that differ in an attribute and nodes writing graph outputs stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

TEST(CommonSubexpressionEliminationTest, MergesRepeatedChains) {
  ModelBuilder m;
  m.input("x", kF, {-1, 4}).output("y");
  m.initializer("k", {1}, {0.5f});
  // Two copies of Relu(x) * k, then their sum: the second chain merges into the first.
  m.node("Relu", {"x"}, {"r1"});
  m.node("Relu", {"x"}, {"r2"});
  m.node("Mul", {"r1", "k"}, {"m1"});
  m.node("Mul", {"r2", "k"}, {"m2"});
  m.node("Add", {"m1", "m2"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({3, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_common_subexpression_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Relu"), 1);
  EXPECT_EQ(count_op(*g, "Mul"), 1);
  EXPECT_NE(dump_graph(*g).find("Add 'Add_y': m1, m1 -> y"), std::string::npos) << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(CommonSubexpressionEliminationTest, KeepsRandomOpsDifferentAttributesAndOutputs) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).output("y").output("a").output("b").output("s1").output("s2");
  m.node("RandomUniformLike", {"x"}, {"u1"});
  m.node("RandomUniformLike", {"x"}, {"u2"});
  m.node("Sub", {"u1", "u2"}, {"y"});  // not identically zero: the two draws must stay
  m.node("Softmax", {"x"}, {"a"}).add_attribute()->CopyFrom(int_attr("axis", 0));
  m.node("Softmax", {"x"}, {"b"}).add_attribute()->CopyFrom(int_attr("axis", 1));
  m.node("Neg", {"x"}, {"s1"});  // graph outputs keep their names
  m.node("Neg", {"x"}, {"s2"});
  auto g = optimized_graph(m.bytes(), pass_list(make_common_subexpression_elimination()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "RandomUniformLike"), 2);
  EXPECT_EQ(count_op(*g, "Softmax"), 2);
  EXPECT_EQ(count_op(*g, "Neg"), 2);
}

TEST(CommonSubexpressionEliminationTest, MergesBertStyleShapeChainsAndConstants) {
  ModelBuilder m;
  m.input("x", kF, {-1, 4}).output("y");
  int64_initializer(m, "zero", {}, {0});
  int64_initializer(m, "axes", {1}, {0});
  for (const std::string s : {"a", "b"}) {
    m.node("Shape", {"x"}, {"shape_" + s});
    m.node("Gather", {"shape_" + s, "zero"}, {"n_" + s});
    m.node("Unsqueeze", {"n_" + s, "axes"}, {"u_" + s});
  }
  int64_initializer(m, "four", {1}, {4});
  m.node("Concat", {"u_a", "four"}, {"shape1"}).add_attribute()->CopyFrom(int_attr("axis", 0));
  m.node("Concat", {"u_b", "four"}, {"shape2"}).add_attribute()->CopyFrom(int_attr("axis", 0));
  m.node("Reshape", {"x", "shape1"}, {"r1"});
  m.node("Reshape", {"x", "shape2"}, {"r2"});
  m.node("Add", {"r1", "r2"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({5, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_common_subexpression_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Shape"), 1);
  EXPECT_EQ(count_op(*g, "Gather"), 1);
  EXPECT_EQ(count_op(*g, "Concat"), 1);
  EXPECT_EQ(count_op(*g, "Reshape"), 1);
  expect_session_levels_agree(m.bytes(), in);
}

}  // namespace
}  // namespace osprey::passes::testing
