#include "ir/graph.h"

#include <gtest/gtest.h>

namespace osprey::ir {
namespace {

Node make_node(Graph& g, const std::string& op, std::vector<std::string> ins,
               std::vector<std::string> outs) {
  Node n;
  n.op_type = op;
  n.name = op + "_" + outs[0];
  for (auto& i : ins) n.inputs.push_back(g.add_value(i));
  for (auto& o : outs) n.outputs.push_back(g.add_value(o));
  return n;
}

TEST(GraphTest, SortsNodesTopologically) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  g.nodes.push_back(make_node(g, "Relu", {"b"}, {"c"}));
  g.nodes.push_back(make_node(g, "Neg", {"x"}, {"b"}));
  g.outputs.push_back(g.find_value("c"));
  ASSERT_TRUE(g.finalize().ok());
  EXPECT_EQ(g.nodes[0].op_type, "Neg");
  EXPECT_EQ(g.nodes[1].op_type, "Relu");
  // b is released after Relu reads it; c is an output and is never released.
  ASSERT_EQ(g.release_after.size(), 2u);
  EXPECT_EQ(g.release_after[1], std::vector<int>{g.find_value("b")});
}

TEST(GraphTest, RejectsCycle) {
  Graph g;
  g.nodes.push_back(make_node(g, "Neg", {"b"}, {"a"}));
  g.nodes.push_back(make_node(g, "Neg", {"a"}, {"b"}));
  g.outputs.push_back(g.find_value("a"));
  Status s = g.finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
}

TEST(GraphTest, RejectsUndefinedValue) {
  Graph g;
  g.nodes.push_back(make_node(g, "Neg", {"nowhere"}, {"a"}));
  g.outputs.push_back(g.find_value("a"));
  Status s = g.finalize();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("undefined value 'nowhere'"), std::string::npos) << s.message();
}

TEST(GraphTest, RejectsDoubleProducer) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  g.nodes.push_back(make_node(g, "Neg", {"x"}, {"a"}));
  g.nodes.push_back(make_node(g, "Relu", {"x"}, {"a"}));
  g.outputs.push_back(g.find_value("a"));
  EXPECT_FALSE(g.finalize().ok());
}

TEST(GraphTest, SubgraphCapturesBecomeImplicitInputs) {
  Graph g;
  g.inputs.push_back(g.add_value("x"));
  g.nodes.push_back(make_node(g, "Neg", {"x"}, {"y"}));
  auto body = std::make_shared<Graph>();
  body->nodes.push_back(make_node(*body, "Relu", {"y"}, {"z"}));
  body->outputs.push_back(body->find_value("z"));
  Node n = make_node(g, "If", {"x"}, {"out"});
  n.attributes["then_branch"].type = Attribute::Type::kGraph;
  n.attributes["then_branch"].g = body;
  g.nodes.insert(g.nodes.begin(), n);  // out of order on purpose
  g.outputs.push_back(g.find_value("out"));
  ASSERT_TRUE(g.finalize().ok());
  EXPECT_EQ(g.nodes[0].op_type, "Neg");  // If moved after the producer of its capture
  ASSERT_EQ(body->captures.size(), 1u);
  EXPECT_EQ(body->capture_sources[0], g.find_value("y"));
  EXPECT_EQ(g.nodes[1].implicit_inputs, std::vector<int>{g.find_value("y")});
}

}  // namespace
}  // namespace osprey::ir
