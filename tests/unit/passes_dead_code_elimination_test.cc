// dead_code_elimination: unread nodes and initializers go; outputs, captures and
// initializer-backed inputs stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

TEST(DeadCodeEliminationTest, RemovesUnreadChainsAndInitializers) {
  ModelBuilder m;
  m.input("x", kF, {2, 3}).input("d", kF, {3}).output("y");
  m.initializer("unused", {3}, {1, 2, 3});
  m.initializer("d", {3}, {0.5f, 0.5f, 0.5f});  // an input with a default: kept
  m.initializer("w", {3}, {1, -1, 2});
  m.node("Mul", {"x", "w"}, {"a"});
  m.node("Relu", {"a"}, {"y"});
  m.node("Neg", {"x"}, {"n1"});  // dead chain
  m.node("Add", {"n1", "unused"}, {"n2"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_dead_code_elimination()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->initializers.size(), 2u);  // w and d
  const std::string dump = dump_graph(*g);
  EXPECT_EQ(dump.find("unused"), std::string::npos) << dump;
  EXPECT_NE(dump.find("initializer d:"), std::string::npos) << dump;
  expect_session_levels_agree(m.bytes(), in);
}

TEST(DeadCodeEliminationTest, KeepsValuesReadBySubgraphs) {
  ModelBuilder m;
  m.input("x", kF, {3}).input("c", onnx::TensorProto::BOOL, {}).output("o");
  m.node("Neg", {"x"}, {"a"});  // read only inside the branches
  m.node("Abs", {"x"}, {"dead"});
  auto& n = m.node("If", {"c"}, {"o"});
  auto& t = add_branch(n, "then_branch", "t");
  add_subgraph_node(t, "Relu", {"a"}, {"t"});
  add_subgraph_node(t, "Sin", {"a"}, {"t_dead"});  // dead inside the subgraph
  add_subgraph_node(add_branch(n, "else_branch", "e"), "Identity", {"a"}, {"e"});
  for (bool c : {true, false}) {
    const std::vector<NamedTensor> in = {{"x", ramp({3})}, {"c", bool_scalar(c)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_dead_code_elimination()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(g->nodes.size(), 2u);
    EXPECT_EQ(count_op(*g, "Neg"), 1);
    EXPECT_EQ(dump_graph(*g).find("Sin"), std::string::npos) << dump_graph(*g);
    expect_session_levels_agree(m.bytes(), in);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
