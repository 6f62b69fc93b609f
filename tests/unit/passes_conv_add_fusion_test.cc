// conv_add_fusion: Conv + Add(residual of the same shape) -> FusedConv with input Z (and,
// with conv_activation_fusion after it, the activation too); broadcasts and residuals that
// depend on the Conv stay. Also checks FusedConv's own error for a residual of the wrong shape.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 5);
  return v;
}

onnx::NodeProto& padded_conv(ModelBuilder& m, const std::string& x, const std::string& w,
                             const std::string& y) {
  auto& n = m.node("Conv", {x, w}, {y}, "conv_" + y);
  auto* pads = n.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  return n;
}

std::vector<std::unique_ptr<Pass>> fusions() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_conv_add_fusion());
  v.push_back(make_conv_activation_fusion());
  return v;
}

TEST(ConvAddFusionTest, ResidualBlockBecomesOneFusedConvPerConv) {
  // x -> conv1 -> relu -> conv2 -> (+ x) -> relu -> y : the ResNet basic block.
  ModelBuilder m;
  m.input("x", kF, {-1, 4, 6, 6}).output("y");
  m.initializer("W1", {4, 4, 3, 3}, values(144, -0.2f, 0.09f));
  m.initializer("W2", {4, 4, 3, 3}, values(144, 0.15f, -0.07f));
  padded_conv(m, "x", "W1", "c1");
  m.node("Relu", {"c1"}, {"r1"});
  padded_conv(m, "r1", "W2", "c2");
  m.node("Add", {"x", "c2"}, {"s"});
  m.node("Relu", {"s"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 4, 6, 6})}};
  auto g = expect_pass_preserves(m.bytes(), fusions(), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes.size(), 2u) << dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.FusedConv"), 2);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("FusedConv 'conv_c2': r1, W2, \"\", x -> y  activation=\"Relu\""),
            std::string::npos)
      << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ConvAddFusionTest, LeavesBroadcastsAndDependentResiduals) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).input("b", kF, {1, 2, 1, 1}).output("y").output("z");
  m.initializer("W", {2, 2, 3, 3}, values(36, -0.3f, 0.1f));
  padded_conv(m, "x", "W", "c");
  m.node("Add", {"c", "b"}, {"y"});  // a broadcast, not a residual
  padded_conv(m, "x", "W", "c2");
  m.node("Relu", {"c2"}, {"r"});
  m.node("Add", {"c2", "r"}, {"z"});  // c2 is read twice, and r depends on the conv
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 4, 4})}, {"b", ramp({1, 2, 1, 1})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_add_fusion()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Conv"), 2) << dump_graph(*g);
  EXPECT_EQ(count_op(*g, "Add"), 2);
}

TEST(ConvAddFusionTest, FusedConvRejectsResidualOfAnotherShape) {
  ModelBuilder m;
  auto* o = m.proto().add_opset_import();
  o->set_domain("com.osprey");
  o->set_version(1);
  m.input("x", kF, {1, 2, 4, 4}).input("z", kF, {1, 2, 1, 1}).output("y");
  m.initializer("W", {2, 2, 3, 3}, values(36, -0.3f, 0.1f));
  padded_conv(m, "x", "W", "y").set_op_type("FusedConv");
  m.proto().mutable_graph()->mutable_node(0)->set_domain("com.osprey");
  m.proto().mutable_graph()->mutable_node(0)->add_input("");
  m.proto().mutable_graph()->mutable_node(0)->add_input("z");
  auto s = Session::load_from_bytes(m.bytes(), SessionOptions{});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto r = (*s)->run({{"x", ramp({1, 2, 4, 4})}, {"z", ramp({1, 2, 1, 1})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("residual Z has shape [1,2,1,1]"), std::string::npos)
      << r.status().message();
}

}  // namespace
}  // namespace osprey::passes::testing
