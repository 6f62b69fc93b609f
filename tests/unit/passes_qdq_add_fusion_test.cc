// qdq_add_fusion: DequantizeLinear(a) + DequantizeLinear(b) [-> Relu] -> QuantizeLinear (a QDQ
// model's residual sum) becomes one com.osprey QLinearAdd with the same float operations: the
// output is bit for bit the graph's. Broadcasting sums and shared intermediates stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

void byte_initializer(ModelBuilder& m, const std::string& name, bool is_signed, int v) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8);
  t->add_int32_data(v);
}

// x, z (float) -> Q -> DQ each -> Add [-> Relu] -> Q -> y (uint8).
ModelBuilder qdq_add(bool relu, std::vector<int64_t> z_dims, bool shared = false) {
  ModelBuilder m(13);
  m.input("x", kF, {1, 4, 5, 5}).input("z", kF, z_dims).output("y", onnx::TensorProto::UINT8);
  if (shared) m.output("s");
  m.initializer("sa", {}, {0.02f});
  m.initializer("sb", {}, {0.03f});
  m.initializer("sy", {}, {0.04f});
  byte_initializer(m, "za", false, 128);
  byte_initializer(m, "zb", true, -3);
  byte_initializer(m, "zy", false, 7);
  m.node("QuantizeLinear", {"x", "sa", "za"}, {"xq"});
  m.node("DequantizeLinear", {"xq", "sa", "za"}, {"xd"});
  m.node("QuantizeLinear", {"z", "sb", "zb"}, {"zq"});
  m.node("DequantizeLinear", {"zq", "sb", "zb"}, {"zd"});
  m.node("Add", {"xd", "zd"}, {"s"});
  std::string y = "s";
  if (relu) m.node("Relu", {"s"}, {"r"}), y = "r";
  m.node("QuantizeLinear", {y, "sy", "zy"}, {"y"});
  return m;
}

TEST(QdqAddFusionTest, ResidualSumsBecomeOneNodeWithTheSameBits) {
  for (bool relu : {false, true}) {
    SCOPED_TRACE(relu ? "relu" : "plain");
    ModelBuilder m = qdq_add(relu, {1, 4, 5, 5});
    const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 5, 5}, -2.0f, 0.043f)},
                                         {"z", ramp({1, 4, 5, 5}, 1.5f, -0.031f)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_add_fusion()), in);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearAdd"), 1) << d;
    EXPECT_EQ(count_op(*g, "Add") + count_op(*g, "Relu"), 0) << d;
    EXPECT_EQ(count_op(*g, "QuantizeLinear"), 2) << d;  // the inputs'
    EXPECT_EQ(d.find("activation=\"Relu\"") != std::string::npos, relu) << d;
    expect_session_levels_agree(m.bytes(), in, 2);
  }
}

TEST(QdqAddFusionTest, BroadcastsAndSharedSumsStay) {
  {
    ModelBuilder m = qdq_add(true, {1, 4, 1, 1});
    const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 5, 5}, -2.0f, 0.043f)}, {"z", ramp({1, 4, 1, 1}, 1.0f, 0.1f)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_add_fusion()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearAdd"), 0) << dump_graph(*g);
  }
  {
    ModelBuilder m = qdq_add(false, {1, 4, 5, 5}, /*shared=*/true);
    const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 5, 5}, -2.0f, 0.043f)}, {"z", ramp({1, 4, 5, 5}, 1.0f, 0.01f)}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_qdq_add_fusion()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "com.osprey.QLinearAdd"), 0) << dump_graph(*g);
  }
}

}  // namespace
}  // namespace osprey::passes::testing
