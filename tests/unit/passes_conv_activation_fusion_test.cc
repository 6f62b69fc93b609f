// conv_activation_fusion: Conv + activation -> com.osprey FusedConv with `activation`; the
// FusedConv reference kernel must compute what the two nodes computed.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<float> values(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i % 7);
  return v;
}

onnx::AttributeProto float_attr(const std::string& name, float v) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(v);
  return a;
}

// x[N,3,5,5] -> Conv(W[4,3,3,3], B, pads 1) -> c -> `build(m, "c")` -> y
template <class F>
ModelBuilder conv_then(F build, int opset = 17) {
  ModelBuilder m(opset);
  m.input("x", kF, {-1, 3, 5, 5}).output("y");
  m.initializer("W", {4, 3, 3, 3}, values(108, -0.5f, 0.17f));
  m.initializer("B", {4}, {0.1f, -0.2f, 0.3f, -0.4f});
  auto* pads = m.node("Conv", {"x", "W", "B"}, {"c"}, "conv").add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  build(m);
  return m;
}

std::vector<std::unique_ptr<Pass>> fusion() {
  return pass_list(make_conv_activation_fusion());
}

void expect_fused(ModelBuilder& m, const std::string& activation, size_t nodes = 1) {
  SCOPED_TRACE(activation);
  const std::vector<NamedTensor> in = {{"x", ramp({2, 3, 5, 5}, -2.0f, 0.41f)}};
  auto g = expect_pass_preserves(m.bytes(), fusion(), in);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->nodes.size(), nodes) << dump_graph(*g);
  EXPECT_EQ(count_op(*g, "com.osprey.FusedConv"), 1) << dump_graph(*g);
  EXPECT_NE(dump_graph(*g).find("activation=\"" + activation + "\""), std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(ConvActivationFusionTest, FusesEachActivation) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "HardSwish"}) {
    auto m = conv_then([&](ModelBuilder& b) { b.node(op, {"c"}, {"y"}); });
    expect_fused(m, op);
  }
  auto leaky = conv_then([](ModelBuilder& b) {
    b.node("LeakyRelu", {"c"}, {"y"}).add_attribute()->CopyFrom(float_attr("alpha", 0.2f));
  });
  expect_fused(leaky, "LeakyRelu");
  auto hs = conv_then([](ModelBuilder& b) {
    auto& n = b.node("HardSigmoid", {"c"}, {"y"});
    n.add_attribute()->CopyFrom(float_attr("alpha", 0.3f));
    n.add_attribute()->CopyFrom(float_attr("beta", 0.4f));
  });
  expect_fused(hs, "HardSigmoid");
  auto clip = conv_then([](ModelBuilder& b) {
    b.initializer("lo", {}, {0.0f});
    b.initializer("hi", {}, {0.6f});
    b.node("Clip", {"c", "lo", "hi"}, {"y"});
  });
  expect_fused(clip, "Clip");
  auto silu = conv_then([](ModelBuilder& b) {
    b.node("Sigmoid", {"c"}, {"s"});
    b.node("Mul", {"s", "c"}, {"y"});
  });
  expect_fused(silu, "Silu");
}

TEST(ConvActivationFusionTest, FusesTheActivationsOfLaterOpsets) {
  auto mish = conv_then([](ModelBuilder& b) { b.node("Mish", {"c"}, {"y"}); }, 18);
  expect_fused(mish, "Mish");
  auto gelu = conv_then([](ModelBuilder& b) { b.node("Gelu", {"c"}, {"y"}); }, 20);
  expect_fused(gelu, "Gelu");
  auto gelu_tanh = conv_then(
      [](ModelBuilder& b) {
        auto* a = b.node("Gelu", {"c"}, {"y"}).add_attribute();
        a->set_name("approximate");
        a->set_type(onnx::AttributeProto::STRING);
        a->set_s("tanh");
      },
      20);
  expect_fused(gelu_tanh, "GeluTanh");
}

TEST(ConvActivationFusionTest, LeavesSharedOutputsAndNonConstantClip) {
  auto shared = conv_then([](ModelBuilder& b) {
    b.node("Relu", {"c"}, {"r"});
    b.node("Add", {"r", "c"}, {"y"});  // c is read twice
  });
  auto g = optimized_graph(shared.bytes(), fusion());
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Conv"), 1);
  EXPECT_EQ(count_op(*g, "Relu"), 1);

  auto clip = conv_then([](ModelBuilder& b) {
    b.input("hi", kF, {});
    b.node("Clip", {"c", "", "hi"}, {"y"});  // bound from an input
  });
  auto g2 = optimized_graph(clip.bytes(), fusion());
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_op(*g2, "Clip"), 1);
}

}  // namespace
}  // namespace osprey::passes::testing
