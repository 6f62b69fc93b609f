// activation_affine_fusion: a scalar Mul and/or Add after a fused convolution or matrix product
// (after its activation) becomes the node's activation_affine; other constants, shared values
// and nodes that have one already stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<std::unique_ptr<Pass>> fusions() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_hard_swish_fusion());
  v.push_back(make_conv_activation_fusion());
  v.push_back(make_matmul_add_fusion());
  v.push_back(make_activation_affine_fusion());
  v.push_back(make_dead_code_elimination());
  return v;
}

// x -> Conv -> HardSwish -> [Mul(w)] -> [Add(b)] -> y
ModelBuilder conv_affine(bool mul, bool add, std::vector<int64_t> w_dims = {}) {
  ModelBuilder m;
  m.input("x", kF, {1, 3, 5, 5}).output("y");
  m.initializer("W", {4, 3, 3, 3}, cyclic_values(108, -0.4f, 0.13f, 7));
  m.initializer("w", w_dims, std::vector<float>(static_cast<size_t>(shape_numel(w_dims)), -1.5f));
  m.initializer("b", {1}, {0.25f});
  m.node("Conv", {"x", "W"}, {"c"});
  m.node("HardSwish", {"c"}, {"h"});
  std::string v = "h";
  if (mul) {
    m.node("Mul", {"w", v}, {mul && !add ? "y" : "m"});
    v = "m";
  }
  if (add) m.node("Add", {v, "b"}, {"y"});
  return m;
}

const std::vector<NamedTensor> kIn = {{"x", ramp({1, 3, 5, 5}, -2.0f, 0.21f)}};

TEST(ActivationAffineFusionTest, ScaleShiftOrBothBecomeTheAffine) {
  for (auto [mul, add, want] : {std::tuple{true, true, "[-1.5,0.25]"}, std::tuple{true, false, "[-1.5,0]"},
                                std::tuple{false, true, "[1,0.25]"}}) {
    SCOPED_TRACE(want);
    ModelBuilder m = conv_affine(mul, add);
    auto g = expect_pass_preserves(m.bytes(), fusions(), kIn);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    ASSERT_EQ(g->nodes.size(), 1u) << d;
    EXPECT_NE(d.find(std::string("activation_affine=") + want), std::string::npos) << d;
    EXPECT_NE(d.find("-> y"), std::string::npos) << d;
    expect_session_levels_agree(m.bytes(), kIn, 2);
  }
}

TEST(ActivationAffineFusionTest, PerChannelConstantsAndSharedValuesStay) {
  // A per-channel Mul after the activation is not a scalar: it stays.
  ModelBuilder channel = conv_affine(true, true, {1, 4, 1, 1});
  auto g = expect_pass_preserves(channel.bytes(), fusions(), kIn);
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Mul"), 1) << dump_graph(*g);
  EXPECT_EQ(count_occurrences(dump_graph(*g), "activation_affine=[1,0.25]"), 0) << dump_graph(*g);
  // The activation's output is also a graph output: nothing moves into the node.
  ModelBuilder shared = conv_affine(true, true);
  shared.output("h");
  auto g2 = optimized_graph(shared.bytes(), fusions());
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_occurrences(dump_graph(*g2), "activation_affine"), 0) << dump_graph(*g2);
}

TEST(ActivationAffineFusionTest, MatrixProductTakesItToo) {
  // MatMul + bias -> Relu -> * 0.5 -> + 1: one FusedMatMul.
  ModelBuilder m;
  m.input("a", kF, {2, 6}).output("y");
  m.initializer("B", {6, 3}, cyclic_values(18, -0.3f, 0.11f, 5));
  m.initializer("bias", {3}, {0.1f, -0.2f, 0.3f});
  m.initializer("half", {}, {0.5f});
  m.initializer("one", {}, {1.0f});
  m.node("MatMul", {"a", "B"}, {"p"});
  m.node("Add", {"p", "bias"}, {"q"});
  m.node("Relu", {"q"}, {"r"});
  m.node("Mul", {"r", "half"}, {"s"});
  m.node("Add", {"one", "s"}, {"y"});
  const std::vector<NamedTensor> in = {{"a", ramp({2, 6}, -1.0f, 0.3f)}};
  auto g = expect_pass_preserves(m.bytes(), fusions(), in);
  ASSERT_TRUE(g);
  const std::string d = dump_graph(*g);
  ASSERT_EQ(g->nodes.size(), 1u) << d;
  EXPECT_NE(d.find("com.osprey.FusedMatMul"), std::string::npos) << d;
  EXPECT_NE(d.find("activation_affine=[0.5,1]"), std::string::npos) << d;
  expect_session_levels_agree(m.bytes(), in, 2);
}

}  // namespace
}  // namespace osprey::passes::testing
