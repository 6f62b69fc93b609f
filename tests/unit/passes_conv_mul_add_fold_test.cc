// conv_mul_add_fold: per-channel constant Mul/Add, and a BatchNormalization behind them, after
// a Conv or a ConvTranspose (grouped too) fold into its weights and bias; constants that
// broadcast the output up, or vary along other axes, stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 7);
  return v;
}

TEST(ConvMulAddFoldTest, FoldsChannelScaleAndShiftChains) {
  ModelBuilder m;
  m.input("x", kF, {-1, 2, 4, 4}).output("y");
  m.initializer("W", {3, 2, 3, 3}, values(54, -0.3f, 0.1f));
  m.initializer("B", {3}, {0.1f, 0.2f, 0.3f});
  m.node("Conv", {"x", "W", "B"}, {"c"}, "conv");
  m.initializer("scale", {3, 1, 1}, {2.0f, -1.0f, 0.5f});
  m.node("Mul", {"scale", "c"}, {"s"});
  m.initializer("shift", {1, 3, 1, 1}, {1.0f, 0.0f, -1.0f});
  m.node("Add", {"s", "shift"}, {"t"});
  m.initializer("k", {}, {3.0f});
  m.node("Mul", {"t", "k"}, {"y"});
  const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_mul_add_fold()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_EQ(g->nodes[0].op_type, "Conv");
  EXPECT_EQ(g->values[static_cast<size_t>(g->nodes[0].outputs[0])].name, "y");
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ConvMulAddFoldTest, LeavesBroadcastingAndSpatialConstants) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).output("y").output("z");
  m.initializer("W", {3, 2, 3, 3}, values(54, -0.3f, 0.1f));
  m.node("Conv", {"x", "W"}, {"c"});
  m.initializer("spatial", {1, 1, 2, 2}, {1, 2, 3, 4});  // varies over H, W
  m.node("Mul", {"c", "spatial"}, {"y"});
  m.node("Conv", {"x", "W"}, {"c2"});
  m.initializer("wide", {1, 1, 3, 1, 1}, {1, 2, 3});  // raises the rank
  m.node("Add", {"c2", "wide"}, {"z"});
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_mul_add_fold()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Mul"), 1);
  EXPECT_EQ(count_op(*g, "Add"), 1);
}

void add_bn(ModelBuilder& m, const std::string& x, const std::string& y, int64_t c) {
  std::vector<float> gamma, beta, mean, var;
  for (int64_t k = 0; k < c; ++k) {
    gamma.push_back(0.5f + 0.25f * static_cast<float>(k));
    beta.push_back(0.1f * static_cast<float>(k) - 0.2f);
    mean.push_back(0.05f * static_cast<float>(k));
    var.push_back(1.0f + 0.5f * static_cast<float>(k));
  }
  m.initializer(y + "_g", {c}, gamma);
  m.initializer(y + "_b", {c}, beta);
  m.initializer(y + "_m", {c}, mean);
  m.initializer(y + "_v", {c}, var);
  m.node("BatchNormalization", {x, y + "_g", y + "_b", y + "_m", y + "_v"}, {y});
}

TEST(ConvMulAddFoldTest, ConvTransposeBiasAddAndBatchNormFold) {
  // An upsampling head as exported by PaddlePaddle: ConvTranspose (no B) -> Add(bias
  // [1,M,1,1]) -> BatchNormalization; grouped (2 groups of 2 inputs -> 3 outputs each) so the
  // weights' output channels are W[c, m - g*3].
  for (int64_t group : {1, 2}) {
    SCOPED_TRACE(group);
    ModelBuilder m;
    m.input("x", kF, {-1, 4, 3, 3}).output("y");
    m.initializer("W", {4, 3, 2, 2}, values(48, -0.3f, 0.1f));
    m.initializer("bias", {1, 3 * group, 1, 1}, values(static_cast<size_t>(3 * group), 0.2f, -0.15f));
    auto& ct = m.node("ConvTranspose", {"x", "W"}, {"c"});
    for (const char* name : {"strides", "kernel_shape"}) {
      auto* a = ct.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      a->add_ints(2);
      a->add_ints(2);
    }
    auto* ga = ct.add_attribute();
    ga->set_name("group");
    ga->set_type(onnx::AttributeProto::INT);
    ga->set_i(group);
    m.node("Add", {"c", "bias"}, {"a"});
    add_bn(m, "a", "y", 3 * group);
    const std::vector<NamedTensor> in = {{"x", ramp({2, 4, 3, 3})}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_mul_add_fold()), in);
    ASSERT_TRUE(g);
    ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
    EXPECT_EQ(g->nodes[0].op_type, "ConvTranspose");
    EXPECT_EQ(g->nodes[0].inputs.size(), 3u);
    EXPECT_EQ(g->values[static_cast<size_t>(g->nodes[0].outputs[0])].name, "y");
    expect_session_levels_agree(m.bytes(), in, 2);
  }
}

TEST(ConvMulAddFoldTest, BatchNormBehindAConvsBiasAddFolds) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).output("y");
  m.initializer("W", {3, 2, 3, 3}, values(54, -0.3f, 0.1f));
  m.node("Conv", {"x", "W"}, {"c"});
  m.initializer("bias", {3, 1, 1}, {0.3f, -0.2f, 0.1f});
  m.node("Add", {"bias", "c"}, {"a"});
  add_bn(m, "a", "y", 3);
  const std::vector<NamedTensor> in = {{"x", ramp({1, 2, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_mul_add_fold()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_EQ(g->nodes[0].op_type, "Conv");
  // A BatchNormalization whose variance is a graph input (not a constant) stays; the Add folds.
  ModelBuilder open;
  open.input("x", kF, {1, 2, 4, 4}).input("var", kF, {3}).output("y");
  open.initializer("W", {3, 2, 3, 3}, values(54, -0.3f, 0.1f));
  open.initializer("bias", {3, 1, 1}, {0.3f, -0.2f, 0.1f});
  open.initializer("g", {3}, {1.0f, 0.5f, 2.0f});
  open.initializer("b", {3}, {0.0f, 0.1f, 0.2f});
  open.initializer("mean", {3}, {0.1f, 0.0f, -0.1f});
  open.node("Conv", {"x", "W"}, {"c"});
  open.node("Add", {"c", "bias"}, {"a"});
  open.node("BatchNormalization", {"a", "g", "b", "mean", "var"}, {"y"});
  const std::vector<NamedTensor> in2 = {{"x", ramp({1, 2, 4, 4})}, {"var", ramp({3}, 1.0f, 0.5f)}};
  auto g2 = expect_pass_preserves(open.bytes(), pass_list(make_conv_mul_add_fold()), in2);
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->nodes.size(), 2u) << dump_graph(*g2);
  EXPECT_EQ(count_op(*g2, "BatchNormalization"), 1) << dump_graph(*g2);
}

}  // namespace
}  // namespace osprey::passes::testing
