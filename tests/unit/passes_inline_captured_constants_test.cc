// inline_captured_constants: outer constants that If branches read become the branches'
// initializers, so constant_folding can fold what the branches compute from them alone (a
// weight sliced on every run), in nested branches too; initializer-backed graph inputs, which
// the caller may override, stay captured.
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

std::vector<std::unique_ptr<Pass>> inline_then_fold() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_constant_folding());
  v.push_back(make_inline_captured_constants());
  v.push_back(make_constant_folding());
  return v;
}

// x[4], c: If(c) then x + W[0:4] + bias else (If(c) inside: x * W[4:8]); bias is a graph input
// with a default.
ModelBuilder branches() {
  ModelBuilder m;
  m.input("x", kF, {4}).input("c", onnx::TensorProto::BOOL, {}).input("bias", kF, {4}).output("o");
  m.initializer("W", {8}, {1, 2, 3, 4, 5, 6, 7, 8});
  m.initializer("bias", {4}, {0.5f, 0.5f, 0.5f, 0.5f});
  int64_initializer(m, "s0", {1}, {0});
  int64_initializer(m, "s4", {1}, {4});
  int64_initializer(m, "s8", {1}, {8});
  auto& n = m.node("If", {"c"}, {"o"});
  auto& t = add_branch(n, "then_branch", "t");
  add_subgraph_node(t, "Slice", {"W", "s0", "s4"}, {"w_lo"});
  add_subgraph_node(t, "Add", {"x", "w_lo"}, {"t1"});
  add_subgraph_node(t, "Add", {"t1", "bias"}, {"t"});
  auto& e = add_branch(n, "else_branch", "e");
  auto& inner = add_subgraph_node(e, "If", {"c"}, {"e"});
  auto& a = add_branch(inner, "then_branch", "a");
  add_subgraph_node(a, "Slice", {"W", "s4", "s8"}, {"w_hi"});
  add_subgraph_node(a, "Mul", {"x", "w_hi"}, {"a"});
  auto& b = add_branch(inner, "else_branch", "b");
  add_subgraph_node(b, "Neg", {"x"}, {"b"});
  return m;
}

TEST(InlineCapturedConstantsTest, BranchesFoldWhatTheyComputeFromOuterConstants) {
  ModelBuilder m = branches();
  for (bool c : {true, false}) {
    const std::vector<NamedTensor> in = {{"x", ramp({4})}, {"c", bool_scalar(c)}, {"bias", ramp({4}, 2.0f, 1.0f)}};
    auto g = expect_pass_preserves(m.bytes(), inline_then_fold(), in);
    ASSERT_TRUE(g);
    const std::string d = dump_graph(*g);
    EXPECT_EQ(count_occurrences(d, "Slice '"), 0) << d;  // both slices folded, the nested one too
    EXPECT_NE(d.find("t1, bias -> t"), std::string::npos) << d;  // the overridable input stays read
    expect_session_levels_agree(m.bytes(), in);
  }
  // Without the pass the branches keep their slices.
  auto g0 = optimized_graph(m.bytes(), pass_list(make_constant_folding()));
  ASSERT_TRUE(g0);
  EXPECT_EQ(count_occurrences(dump_graph(*g0), "Slice '"), 2) << dump_graph(*g0);
}

}  // namespace
}  // namespace osprey::passes::testing
