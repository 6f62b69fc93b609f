// gelu_fusion: the erf and tanh decompositions of GELU, in the node orders exporters write,
// become one com.osprey Gelu; wrong constants and shared intermediates stay.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

enum class Tail { kXpHalf, kHalfXp, kXHalfp };

// x -> GELU(erf) -> y, with `div` choosing x / sqrt2 or x * (1 / sqrt2).
ModelBuilder erf_gelu(bool div, Tail tail, float sqrt2 = 1.4142135f) {
  ModelBuilder m;
  m.input("x", kF, {-1, 7}).output("y");
  m.initializer("half", {}, {0.5f});
  m.initializer("one", {}, {1.0f});
  if (div) {
    m.initializer("c", {}, {sqrt2});
    m.node("Div", {"x", "c"}, {"d"});
  } else {
    m.initializer("c", {}, {1.0f / sqrt2});
    m.node("Mul", {"c", "x"}, {"d"});
  }
  m.node("Erf", {"d"}, {"e"});
  m.node("Add", {"one", "e"}, {"p"});
  switch (tail) {
    case Tail::kXpHalf:
      m.node("Mul", {"x", "p"}, {"xp"});
      m.node("Mul", {"xp", "half"}, {"y"}, "last");
      break;
    case Tail::kHalfXp:
      m.node("Mul", {"half", "x"}, {"hx"});
      m.node("Mul", {"p", "hx"}, {"y"}, "last");
      break;
    case Tail::kXHalfp:
      m.node("Mul", {"p", "half"}, {"ph"});
      m.node("Mul", {"x", "ph"}, {"y"}, "last");
      break;
  }
  return m;
}

void expect_one_gelu(ModelBuilder& m, const std::string& approximate) {
  const std::vector<NamedTensor> in = {{"x", ramp({3, 7}, -3.0f, 0.61f)}};
  auto g = expect_pass_preserves(m.bytes(), pass_list(make_gelu_fusion()), in);
  ASSERT_TRUE(g);
  ASSERT_EQ(g->nodes.size(), 1u) << dump_graph(*g);
  EXPECT_NE(
      dump_graph(*g).find("com.osprey.Gelu 'last': x -> y  approximate=\"" + approximate + "\""),
      std::string::npos)
      << dump_graph(*g);
  expect_session_levels_agree(m.bytes(), in, 2);
}

TEST(GeluFusionTest, ErfFormInEveryOrder) {
  for (bool div : {true, false})
    for (Tail t : {Tail::kXpHalf, Tail::kHalfXp, Tail::kXHalfp}) {
      SCOPED_TRACE(std::to_string(div) + "/" + std::to_string(static_cast<int>(t)));
      auto m = erf_gelu(div, t);
      expect_one_gelu(m, "none");
    }
}

TEST(GeluFusionTest, TanhFormWithPowOrProduct) {
  for (bool pow : {true, false}) {
    SCOPED_TRACE(pow);
    ModelBuilder m;
    m.input("x", kF, {-1, 7}).output("y");
    m.initializer("half", {}, {0.5f});
    m.initializer("one", {}, {1.0f});
    m.initializer("k", {}, {0.044715f});
    m.initializer("s", {}, {0.7978846f});
    if (pow) {
      m.initializer("three", {}, {3.0f});
      m.node("Pow", {"x", "three"}, {"cube"});
    } else {
      m.node("Mul", {"x", "x"}, {"sq"});
      m.node("Mul", {"sq", "x"}, {"cube"});
    }
    m.node("Mul", {"k", "cube"}, {"kc"});
    m.node("Add", {"x", "kc"}, {"u"});
    m.node("Mul", {"u", "s"}, {"su"});
    m.node("Tanh", {"su"}, {"t"});
    m.node("Add", {"t", "one"}, {"p"});
    m.node("Mul", {"x", "half"}, {"hx"});
    m.node("Mul", {"hx", "p"}, {"y"}, "last");
    expect_one_gelu(m, "tanh");
  }
}

TEST(GeluFusionTest, LeavesWrongConstantsAndSharedIntermediates) {
  auto wrong = erf_gelu(true, Tail::kXpHalf, 1.5f);
  auto g = optimized_graph(wrong.bytes(), pass_list(make_gelu_fusion()));
  ASSERT_TRUE(g);
  EXPECT_EQ(count_op(*g, "Erf"), 1);

  auto shared = erf_gelu(true, Tail::kXpHalf);
  shared.output("e");  // the Erf output is also a graph output
  auto g2 = optimized_graph(shared.bytes(), pass_list(make_gelu_fusion()));
  ASSERT_TRUE(g2);
  EXPECT_EQ(count_op(*g2, "Erf"), 1);
  EXPECT_EQ(count_op(*g2, "com.osprey.Gelu"), 0);
}

}  // namespace
}  // namespace osprey::passes::testing
