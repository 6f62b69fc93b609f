// identity_elimination: pass-through nodes go away, graph outputs and captures keep their names.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

TEST(IdentityEliminationTest, RemovesInnerIdentity) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).output("y");
  m.node("Relu", {"x"}, {"a"});
  m.node("Identity", {"a"}, {"b"});
  m.node("Neg", {"b"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Identity"), 0);
  EXPECT_EQ(g->nodes.size(), 2u);
  EXPECT_NE(dump_graph(*g).find("Neg 'Neg_y': a -> y"), std::string::npos) << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(IdentityEliminationTest, GraphOutputKeepsItsNameByRenamingTheProducer) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).output("y");
  m.node("Relu", {"x"}, {"a"});
  m.node("Identity", {"a"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_NE(dump_graph(*g).find("Relu 'Relu_a': x -> y"), std::string::npos) << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(IdentityEliminationTest, KeepsIdentityBetweenGraphInputAndOutputOrTwoOutputs) {
  ModelBuilder m;
  m.input("x", kF, {2}).output("y").output("a").output("z");
  m.node("Identity", {"x"}, {"y"});  // input -> output: nothing to rename
  m.node("Relu", {"x"}, {"a"});
  m.node("Identity", {"a"}, {"z"});  // a is itself an output
  auto g =
      expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), {{"x", ramp({2})}});
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Identity"), 2);
}

TEST(IdentityEliminationTest, DropoutWithoutUsedMaskOnly) {
  ModelBuilder m(13);
  m.input("x", kF, {2, 3}).output("y").output("mask", onnx::TensorProto::BOOL);
  m.node("Dropout", {"x"}, {"a"});
  m.node("Neg", {"a"}, {"b"});
  m.node("Dropout", {"b"}, {"y", "mask"});  // mask is read: kept
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Dropout"), 1);
  EXPECT_EQ(g->nodes.size(), 2u);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(IdentityEliminationTest, CastToTheSameTypeOnly) {
  ModelBuilder m;
  m.input("x", kF, {4}).output("y").output("i", kI64);
  m.node("Cast", {"x"}, {"a"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(onnx::TensorProto::FLOAT);
    return a;
  }());
  m.node("Neg", {"a"}, {"y"});
  auto to_int = [] {
    onnx::AttributeProto a;
    a.set_name("to");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(onnx::TensorProto::INT64);
    return a;
  };
  m.node("Cast", {"x"}, {"c"}).add_attribute()->CopyFrom(to_int());  // a real conversion: kept
  m.node("Cast", {"c"}, {"d"}).add_attribute()->CopyFrom(to_int());  // int64 -> int64: removed
  m.node("Abs", {"d"}, {"i"});
  const std::vector<NamedTensor> in = {{"x", ramp({4}, -2.0f, 1.3f)}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Cast"), 1);
  EXPECT_EQ(g->nodes.size(), 3u);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(IdentityEliminationTest, ReshapeToTheSameKnownShapeOnly) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).output("y").output("z");
  int64_initializer(m, "same", {2}, {0, -1});
  int64_initializer(m, "other", {2}, {3, 2});
  m.node("Reshape", {"x", "same"}, {"a"});
  m.node("Relu", {"a"}, {"y"});
  m.node("Reshape", {"x", "other"}, {"b"});
  m.node("Relu", {"b"}, {"z"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Reshape"), 1);
  EXPECT_NE(dump_graph(*g).find("Reshape 'Reshape_b': x, other -> b"), std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in);
}

TEST(IdentityEliminationTest, KeepsValuesCapturedBySubgraphs) {
  ModelBuilder m;
  m.input("x", kF, {3}).input("c", onnx::TensorProto::BOOL, {}).output("o");
  m.node("Relu", {"x"}, {"a"});
  m.node("Identity", {"a"}, {"b"});  // b is read by name inside both branches
  auto& n = m.node("If", {"c"}, {"o"});
  add_subgraph_node(add_branch(n, "then_branch", "t"), "Neg", {"b"}, {"t"});
  auto& e = add_branch(n, "else_branch", "e");
  add_subgraph_node(e, "Identity", {"b"}, {"e1"});  // inside the subgraph: removable
  add_subgraph_node(e, "Abs", {"e1"}, {"e"});
  for (bool c : {true, false}) {
    const std::vector<NamedTensor> in = {{"x", ramp({3})}, {"c", bool_scalar(c)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_identity_elimination()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "Identity"), 1);
    const std::string d = dump_graph(*g);
    EXPECT_NE(d.find("Abs 'Abs_e': b -> e"), std::string::npos) << d;
    expect_session_levels_agree(m.bytes(), in);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
