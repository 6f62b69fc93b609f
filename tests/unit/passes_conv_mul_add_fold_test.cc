// conv_mul_add_fold: per-channel constant Mul/Add after a Conv fold into its weights and bias;
// constants that broadcast the output up, or vary along other axes, stay.
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

}  // namespace
}  // namespace osprey::passes::testing
