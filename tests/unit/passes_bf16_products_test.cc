// keep_bf16_between_products (compute_precision.h): in fast mode, the output of a FusedMatMul
// without a residual Z that only fast-mode FusedMatMuls read as A becomes bfloat16 (a
// transformer's feed-forward pair); graph outputs, values other ops read, products with a
// residual and unmarked products stay float32. A fast-mode session marks the pair and its
// outputs stay close to exact mode's.
#include "kernels/cpu/cpu_capabilities.h"
#include "passes/compute_precision.h"
#include "passes_test_util.h"

namespace osprey::passes::testing {
namespace {

void linear(ModelBuilder& m, const std::string& x, const std::string& y, int64_t k, int64_t n, uint64_t seed) {
  m.initializer("W_" + y, {k, n}, cyclic_values(static_cast<size_t>(k * n), -0.3f, 0.013f, 17 + seed));
  m.initializer("b_" + y, {n}, cyclic_values(static_cast<size_t>(n), -0.1f, 0.02f, 7));
  m.node("MatMul", {x, "W_" + y}, {y + "_mm"});
  m.node("Add", {y + "_mm", "b_" + y}, {y});
}

// x [N, 4, 8] -> h = Relu(x W1 + b1) [N, 4, 16] -> d = h W2 + b2 + x -> y = d W3 + b3. With
// `h_is_output`, h is a graph output too; with `h_to_sigmoid`, a Sigmoid reads h as well.
std::string feed_forward(bool h_is_output, bool h_to_sigmoid) {
  ModelBuilder m;
  m.input("x", kF, {-1, 4, 8}).output("y");
  if (h_is_output) m.output("h");
  linear(m, "x", "h0", 8, 16, 1);
  m.node("Relu", {"h0"}, {"h"});
  linear(m, "h", "d0", 16, 8, 2);
  m.node("Add", {"d0", "x"}, {"d"});
  linear(m, "d", "y", 8, 8, 3);
  if (h_to_sigmoid) {
    m.node("Sigmoid", {"h"}, {"s"});
    m.output("s");
  }
  return m.bytes();
}

// The fused graph with every FusedMatMul marked for bf16 compute (unless `unmarked`).
std::shared_ptr<ir::Graph> fused(const std::string& bytes, bool unmarked = false) {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(make_matmul_add_fusion());
  v.push_back(make_dead_code_elimination());
  auto g = optimized_graph(bytes, std::move(v));
  if (!g || unmarked) return g;
  ir::Attribute bf16;
  bf16.type = ir::Attribute::Type::kString;
  bf16.s = "bf16";
  for (auto& n : g->nodes)
    if (n.op_type == "FusedMatMul") n.attributes[kComputePrecisionAttr] = bf16;
  return g;
}

int64_t flag(const ir::Graph& g, const std::string& produces, const char* name) {
  const int id = g.find_value(produces);
  for (const auto& n : g.nodes)
    if (!n.outputs.empty() && n.outputs[0] == id) {
      const ir::Attribute* a = n.find_attribute(name);
      return a ? a->i : 0;
    }
  ADD_FAILURE() << "no producer of " << produces;
  return -1;
}

DType type_of(const ir::Graph& g, const std::string& value) {
  const int id = g.find_value(value);
  EXPECT_GE(id, 0) << value;
  return id < 0 ? DType::kUndefined : g.values[static_cast<size_t>(id)].type.dtype;
}

TEST(Bf16ProductsTest, FeedForwardPairBecomesBf16) {
  auto g = fused(feed_forward(false, false));
  ASSERT_TRUE(g);
  ASSERT_EQ(count_op(*g, "com.osprey.FusedMatMul"), 3) << dump_graph(*g);
  EXPECT_EQ(keep_bf16_between_products(*g), 1);
  EXPECT_EQ(type_of(*g, "h"), DType::kBFloat16);
  EXPECT_EQ(flag(*g, "h", "bf16_output"), 1);
  EXPECT_EQ(flag(*g, "d", "bf16_input"), 1);
  // d's producer adds the residual x: d stays float32, and so does y's input.
  EXPECT_NE(type_of(*g, "d"), DType::kBFloat16);
  EXPECT_EQ(flag(*g, "d", "bf16_output"), 0);
  EXPECT_EQ(flag(*g, "y", "bf16_input"), 0);
  EXPECT_EQ(flag(*g, "y", "bf16_output"), 0);  // a graph output
}

TEST(Bf16ProductsTest, GraphOutputsOtherReadersAndUnmarkedProductsStayFloat) {
  for (auto [h_out, h_sig] : {std::pair{true, false}, std::pair{false, true}}) {
    SCOPED_TRACE(h_out ? "h is a graph output" : "a Sigmoid reads h");
    auto g = fused(feed_forward(h_out, h_sig));
    ASSERT_TRUE(g);
    EXPECT_EQ(keep_bf16_between_products(*g), 0);
    EXPECT_NE(type_of(*g, "h"), DType::kBFloat16);
    EXPECT_EQ(flag(*g, "h", "bf16_output"), 0);
    EXPECT_EQ(flag(*g, "d", "bf16_input"), 0);
  }
  auto g = fused(feed_forward(false, false), /*unmarked=*/true);
  ASSERT_TRUE(g);
  EXPECT_EQ(keep_bf16_between_products(*g), 0);
  EXPECT_EQ(count_occurrences(dump_graph(*g), "bf16_"), 0);
}

TEST(Bf16ProductsTest, FastSessionKeepsBf16BetweenProductsAndStaysClose) {
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 on this CPU";
  SessionOptions exact_o, fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(feed_forward(false, false), fast_o);
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  auto exact = Session::load_from_bytes(feed_forward(false, false), exact_o);
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();
  const std::string dump = (*fast)->graph_dump();
  EXPECT_EQ(count_occurrences(dump, "bf16_output=1"), 1) << dump;
  EXPECT_EQ(count_occurrences(dump, "bf16_input=1"), 1) << dump;
  for (int64_t batch : {1, 3})
    expect_fast_close_to_exact(**fast, **exact, {{"x", ramp({batch, 4, 8}, -1.0f, 0.03f)}});
}

}  // namespace
}  // namespace osprey::passes::testing
