// conv_bn_fold: Conv followed by inference BatchNormalization becomes one Conv.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 13);
  return v;
}

void add_bn(ModelBuilder& m, const std::string& in, const std::string& out, int64_t c,
            const std::string& p) {
  m.initializer(p + "scale", {c}, values(static_cast<size_t>(c), 0.5f, 0.3f));
  m.initializer(p + "bias", {c}, values(static_cast<size_t>(c), -0.2f, 0.15f));
  m.initializer(p + "mean", {c}, values(static_cast<size_t>(c), 0.1f, -0.05f));
  m.initializer(p + "var", {c}, values(static_cast<size_t>(c), 0.4f, 0.2f));
  auto& bn =
      m.node("BatchNormalization", {in, p + "scale", p + "bias", p + "mean", p + "var"}, {out});
  auto* eps = bn.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto::FLOAT);
  eps->set_f(1e-3f);
}

onnx::AttributeProto int_attr(const std::string& name, int64_t v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(v);
  return a;
}

TEST(ConvBnFoldTest, FoldsWithAndWithoutBias) {
  for (bool with_bias : {true, false}) {
    ModelBuilder m;
    m.input("x", kF, {-1, 2, 5, 5}).output("y");
    m.initializer("W", {3, 2, 3, 3}, values(54, -0.4f, 0.07f));
    std::vector<std::string> conv_in = {"x", "W"};
    if (with_bias) {
      m.initializer("B", {3}, {0.1f, -0.3f, 0.2f});
      conv_in.push_back("B");
    }
    m.node("Conv", conv_in, {"c"}, "conv").add_attribute()->CopyFrom([] {
      onnx::AttributeProto a;
      a.set_name("pads");
      a.set_type(onnx::AttributeProto::INTS);
      for (int i = 0; i < 4; ++i) a.add_ints(1);
      return a;
    }());
    add_bn(m, "c", "b", 3, "bn_");
    m.node("Relu", {"b"}, {"y"});
    const std::vector<NamedTensor> in = {{"x", ramp({2, 2, 5, 5})}};
    auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_bn_fold()), in);
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "BatchNormalization"), 0);
    EXPECT_EQ(g->nodes.size(), 2u);
    const std::string d = dump_graph(*g);
    EXPECT_NE(
        d.find(with_bias ? "Conv 'conv': x, W_bn, B_bn -> b" : "Conv 'conv': x, W_bn, W_bn_1 -> b"),
        std::string::npos)
        << d;
    expect_session_levels_agree(m.bytes(), in);
  }
}

TEST(ConvBnFoldTest, GroupedConvAndSharedWeights) {
  ModelBuilder m;
  m.input("x", kF, {1, 4, 4, 4}).output("y").output("z");
  m.initializer("W", {4, 1, 3, 3}, values(36, 0.3f, -0.05f));
  m.node("Conv", {"x", "W"}, {"c"}, "dw").add_attribute()->CopyFrom(int_attr("group", 4));
  add_bn(m, "c", "y", 4, "bn_");
  m.node("Conv", {"x", "W"}, {"z"}, "other")
      .add_attribute()
      ->CopyFrom(int_attr("group", 4));  // same W, no BN
  const std::vector<NamedTensor> in = {{"x", ramp({1, 4, 4, 4})}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_conv_bn_fold()), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "BatchNormalization"), 0);
  const std::string d = dump_graph(*g);
  EXPECT_NE(d.find("Conv 'other': x, W -> z"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in);
}

TEST(ConvBnFoldTest, KeepsBnWhenConvOutputHasOtherReadersOrTrainingOutputs) {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 4, 4}).output("y").output("c");
  m.initializer("W", {2, 2, 1, 1}, {1, 2, 3, 4});
  m.node("Conv", {"x", "W"}, {"c"});  // c is also a graph output
  add_bn(m, "c", "y", 2, "bn_");
  auto g =
      expect_pass_preserves(m.bytes(), pass_list(make_conv_bn_fold()), {{"x", ramp({1, 2, 4, 4})}});
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "BatchNormalization"), 1);

  ModelBuilder w;  // W is a graph input with a default: not a constant
  w.input("x", kF, {1, 2, 4, 4}).input("W", kF, {2, 2, 1, 1}).output("y");
  w.initializer("W", {2, 2, 1, 1}, {1, 2, 3, 4});
  w.node("Conv", {"x", "W"}, {"c"});
  add_bn(w, "c", "y", 2, "bn_");
  auto g2 = optimized_graph(w.bytes(), pass_list(make_conv_bn_fold()));
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_op(*g2, "BatchNormalization"), 1);
}

}  // namespace
}  // namespace osprey::passes::testing
