// hard_swish_fusion: x * Clip(x + 3, 0, 6) / 6 (PaddlePaddle's export, in the operand orders
// exporters write, / 6 or * 1/6) and x * HardSigmoid(x, 1/6, 1/2) become one HardSwish, which
// then fuses into the convolution before it; other constants and shared intermediates stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

struct Form {
  bool add_three_first = false;  // Add(3, x) instead of Add(x, 3)
  bool gate_first = false;       // Mul(gate, x) instead of Mul(x, gate)
  bool times_sixth = false;      // * (1/6) instead of / 6
  float three = 3.0f, high = 6.0f, six = 6.0f;
};

// x -> decomposed HardSwish -> y (the last node is named "last").
ModelBuilder clip_hard_swish(const Form& f, int opset = 17) {
  ModelBuilder m(opset);
  m.input("x", kF, {-1, 9}).output("y");
  m.initializer("three", {}, {f.three});
  m.initializer("zero", {}, {0.0f});
  m.initializer("high", {}, {f.high});
  m.initializer("six", {}, {f.times_sixth ? 1.0f / f.six : f.six});
  m.node("Add", f.add_three_first ? std::vector<std::string>{"three", "x"} : std::vector<std::string>{"x", "three"}, {"a"});
  m.node("Clip", {"a", "zero", "high"}, {"c"});
  m.node("Mul", f.gate_first ? std::vector<std::string>{"c", "x"} : std::vector<std::string>{"x", "c"}, {"p"});
  m.node(f.times_sixth ? "Mul" : "Div", {"p", "six"}, {"y"}, "last");
  return m;
}

const std::vector<NamedTensor> kIn = {{"x", ramp({4, 9}, -5.0f, 0.29f)}};  // across -3 .. 3

TEST(HardSwishFusionTest, ClipFormInEveryOrder) {
  for (bool a : {false, true})
    for (bool gf : {false, true})
      for (bool sixth : {false, true}) {
        SCOPED_TRACE(std::to_string(a) + std::to_string(gf) + std::to_string(sixth));
        ModelBuilder m = clip_hard_swish({a, gf, sixth});
        auto g = expect_pass_preserves(m.bytes(), pass_list(make_hard_swish_fusion()), kIn);
        ASSERT_TRUE(g);
        ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
        EXPECT_NE(dump_graph(*g).find("HardSwish 'last': x -> y"), std::string::npos) << dump_graph(*g);
        expect_session_levels_agree(m.bytes(), kIn, 2);
      }
}

TEST(HardSwishFusionTest, BeforeOpset14TheNodeTakesTheOpsetThatHasHardSwish) {
  ModelBuilder m = clip_hard_swish({}, 13);
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_hard_swish_fusion()), kIn);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_EQ(g->nodes[0].op_type, "HardSwish");
  EXPECT_EQ(g->nodes[0].opset, 14);
  expect_session_levels_agree(m.bytes(), kIn, 2);
}

TEST(HardSwishFusionTest, HardSigmoidForm) {
  ModelBuilder m;
  m.input("x", kF, {-1, 9}).output("y");
  auto& hs = m.node("HardSigmoid", {"x"}, {"h"});
  auto* alpha = hs.add_attribute();
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto::FLOAT);
  alpha->set_f(1.0f / 6.0f);
  m.node("Mul", {"h", "x"}, {"y"}, "last");
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_hard_swish_fusion()), kIn);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_NE(dump_graph(*g).find("HardSwish 'last': x -> y"), std::string::npos) << dump_graph(*g);
  // HardSigmoid's default alpha (0.2) is not a HardSwish's gate.
  ModelBuilder other;
  other.input("x", kF, {-1, 9}).output("y");
  other.node("HardSigmoid", {"x"}, {"h"});
  other.node("Mul", {"h", "x"}, {"y"});
  auto g2 = optimized_graph(other.bytes(), pass_list(make_hard_swish_fusion()));
  ASSERT_TRUE(g2);
  EXPECT_EQ(g2->nodes.size(), 2u) << dump_graph(*g2);
}

TEST(HardSwishFusionTest, OtherConstantsAndSharedValuesStay) {
  for (const Form& f : {Form{false, false, false, 2.0f}, Form{false, false, false, 3.0f, 5.0f},
                        Form{false, false, false, 3.0f, 6.0f, 5.0f}, Form{false, false, true, 3.0f, 6.0f, 3.0f}}) {
    ModelBuilder m = clip_hard_swish(f);
    auto g = optimized_graph(m.bytes(), pass_list(make_hard_swish_fusion()));
    ASSERT_TRUE(g);
    EXPECT_EQ(count_op(*g, "HardSwish"), 0) << dump_graph(*g);
    EXPECT_EQ(g->nodes.size(), 4u) << dump_graph(*g);
  }
  // The gate is also a graph output: the chain must stay.
  ModelBuilder m = clip_hard_swish({});
  m.output("c");
  auto g = optimized_graph(m.bytes(), pass_list(make_hard_swish_fusion()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "HardSwish"), 0) << dump_graph(*g);
}

TEST(HardSwishFusionTest, FusesIntoTheConvolutionBefore) {
  // conv -> decomposed HardSwish -> y: one FusedConv with the HardSwish activation.
  ModelBuilder m;
  m.input("x", kF, {1, 3, 6, 6}).output("y");
  m.initializer("W", {4, 3, 3, 3}, cyclic_values(108, -0.4f, 0.13f, 7));
  m.initializer("three", {}, {3.0f});
  m.initializer("zero", {}, {0.0f});
  m.initializer("six", {}, {6.0f});
  m.node("Conv", {"x", "W"}, {"c"});
  m.node("Add", {"c", "three"}, {"a"});
  m.node("Clip", {"a", "zero", "six"}, {"cl"});
  m.node("Mul", {"c", "cl"}, {"p"});
  m.node("Div", {"p", "six"}, {"y"});
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(make_hard_swish_fusion());
  passes.push_back(make_conv_activation_fusion());
  passes.push_back(make_dead_code_elimination());
  const std::vector<NamedTensor> in = {{"x", ramp({1, 3, 6, 6}, -2.0f, 0.17f)}};
  auto g = expect_pass_preserves(m.bytes(), std::move(passes), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_NE(dump_graph(*g).find("activation=\"HardSwish\""), std::string::npos) << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in, 2);
}

}  // namespace
}  // namespace osprey::passes::testing
