// In-place outputs (KernelContext::new_output_over_input, marked by the executor): an
// element-wise op, LayerNorm, or a residual FusedConv / FusedMatMul writes over an input that
// nothing reads after it.
// Never over the caller's inputs or views of them, a value a later node reads, or storage a
// view still shares; results always equal those of a run at optimization level 0.
#include <gtest/gtest.h>

#include <cmath>

#include "osprey/session.h"
#include "passes_test_util.h"
#include "test_models.h"

namespace osprey::testing {
namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

Tensor filled(Shape shape, float start, float step) {
  return ramp_filled(std::move(shape), start, step, 31);
}

std::vector<float> weights(size_t n, float scale) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = scale * (static_cast<float>(i % 13) - 6.0f);
  return w;
}

int64_t allocations(const RunProfile& p) {
  return p.memory.arena_outputs + p.memory.heap_outputs;
}

// Runs `bytes` three times at level 2 (recording, then planned twice) and once at level 0;
// every output of every run must match level 0's, and `x` must be unchanged. `dump` (optional)
// receives the optimized graph.
RunProfile run_and_compare(const std::string& bytes, const Tensor& x, std::string* dump = nullptr) {
  auto fast = load_test_session(bytes, 2);
  auto plain = load_test_session(bytes, 0);
  RunProfile last;
  if (!fast || !plain) return last;
  if (dump) *dump = fast->graph_dump();
  const Tensor x_before = x.clone();
  auto want = plain->run({{"x", x}});
  EXPECT_TRUE(want.ok()) << want.status().to_string();
  if (!want.ok()) return last;
  for (int r = 0; r < 3; ++r) {
    last = RunProfile();
    auto got = fast->run({{"x", x}}, &last);
    EXPECT_TRUE(got.ok()) << got.status().to_string();
    if (!got.ok()) return last;
    EXPECT_EQ(got->size(), want->size());
    for (size_t i = 0; i < got->size() && i < want->size(); ++i) {
      const Tensor& g = (*got)[i].second;
      const Tensor& w = (*want)[i].second;
      EXPECT_EQ(g.shape(), w.shape()) << (*got)[i].first;
      int64_t bad = 0;
      for (int64_t k = 0; k < w.numel() && g.shape() == w.shape(); ++k)
        if (std::fabs(g.data<float>()[k] - w.data<float>()[k]) > 1e-4f * (1.0f + std::fabs(w.data<float>()[k])))
          ++bad;
      EXPECT_EQ(bad, 0) << (*got)[i].first << " run " << r << ": elements off level 0's";
      EXPECT_NE(g.raw_data(), x.raw_data());
    }
  }
  for (int64_t k = 0; k < x.numel(); ++k)
    EXPECT_EQ(x.data<float>()[k], x_before.data<float>()[k]) << "the caller's input changed at " << k;
  return last;
}

TEST(InPlace, ElementWiseChainWritesOverItsInputs) {
  // h = x @ W; s = Sigmoid(h); t = Neg(s); u = Add(t, h2) with h2 = x @ W2; y = u @ W.
  // Sigmoid writes over h, Neg over s, Add over t (or h2): one product output (h) and h2 stay
  // in the arena, y goes to the heap.
  ModelBuilder m;
  m.input("x", kF, {2, 16}).output("y");
  m.initializer("W", {16, 16}, weights(256, 0.02f));
  m.initializer("W2", {16, 16}, weights(256, -0.03f));
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("MatMul", {"x", "W2"}, {"h2"});
  m.node("Sigmoid", {"h"}, {"s"});
  m.node("Neg", {"s"}, {"t"});
  m.node("Add", {"t", "h2"}, {"u"});
  m.node("MatMul", {"u", "W"}, {"y"});
  const RunProfile p = run_and_compare(m.bytes(), filled({2, 16}, -0.4f, 0.03f));
  EXPECT_TRUE(p.memory.planned);
  EXPECT_EQ(p.memory.heap_outputs, 1);
  EXPECT_EQ(p.memory.arena_outputs, 2) << "s, t and u should take over h's or h2's bytes";
}

TEST(InPlace, NeverWritesOverTheCallersInputOrAViewOfIt) {
  // x is read last by Relu, and its view v last by Sigmoid: neither may be written over.
  ModelBuilder m;
  m.input("x", kF, {2, 8}).output("a").output("b");
  passes::testing::int64_initializer(m, "shape", {2}, {4, 4});
  m.node("Reshape", {"x", "shape"}, {"v"});
  m.node("Sigmoid", {"v"}, {"b"});
  m.node("Relu", {"x"}, {"a"});
  const Tensor x = filled({2, 8}, -0.5f, 0.04f);
  run_and_compare(m.bytes(), x);
}

TEST(InPlace, NeverWritesOverAValueReadLaterOrStorageAViewShares) {
  // a is read by Sigmoid and later by Add; h's view r outlives Relu(h), h's last direct use.
  ModelBuilder m;
  m.input("x", kF, {2, 16}).output("y");
  m.initializer("W", {16, 16}, weights(256, 0.05f));
  passes::testing::int64_initializer(m, "shape", {2}, {2, 16});
  m.node("MatMul", {"x", "W"}, {"h"});
  m.node("Reshape", {"h", "shape"}, {"r"});
  m.node("Relu", {"h"}, {"a"});
  m.node("Sigmoid", {"a"}, {"s"});
  m.node("Add", {"a", "s"}, {"t"});
  m.node("Add", {"t", "r"}, {"y"});
  run_and_compare(m.bytes(), filled({2, 16}, -0.3f, 0.02f));
}

// x [1, 8, 6, 6]: a = Conv3x3(x); y = Conv3x3(x) + a, which becomes one FusedConv whose
// residual Z is a (a is not read after it).
std::string residual_model() {
  ModelBuilder m;
  m.input("x", kF, {1, 8, 6, 6}).output("y");
  m.initializer("Wa", {8, 8, 3, 3}, weights(576, 0.01f));
  m.initializer("Wb", {8, 8, 3, 3}, weights(576, -0.02f));
  for (const char* w : {"Wa", "Wb"}) {
    auto& n = m.node("Conv", {"x", w}, {std::string(w) == "Wa" ? "a" : "c"});
    auto* pads = n.add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) pads->add_ints(1);
  }
  m.node("Add", {"c", "a"}, {"y"});
  return m.bytes();
}

TEST(InPlace, ResidualConvolutionSumsIntoItsResidual) {
  std::string dump;
  const RunProfile p = run_and_compare(residual_model(), filled({1, 8, 6, 6}, -1.0f, 0.07f), &dump);
  ASSERT_TRUE(p.memory.planned);
  ASSERT_EQ(count_occurrences(dump, "FusedConv"), 2) << dump;
  // Every node makes one output; the residual sum writes over a instead of a new buffer.
  EXPECT_EQ(allocations(p), count_occurrences(dump, " -> ") - 1) << dump;
}

TEST(InPlace, ResidualProductAndLayerNormWriteOverTheirInputs) {
  // a = x @ W1; b = x @ W2; y = LayerNorm(a @ W3 + bias + b). The biased product and the
  // residual sum become one FusedMatMul with Z = b (not read after it); LayerNorm rows are read
  // before they are written.
  ModelBuilder m;
  m.input("x", kF, {4, 16}).output("y");
  m.initializer("W1", {16, 16}, weights(256, 0.02f));
  m.initializer("W2", {16, 16}, weights(256, -0.03f));
  m.initializer("W3", {16, 16}, weights(256, 0.04f));
  m.initializer("gamma", {16}, weights(16, 0.1f));
  m.initializer("beta", {16}, weights(16, 0.01f));
  m.initializer("bias", {16}, weights(16, 0.05f));
  m.node("MatMul", {"x", "W1"}, {"a"});
  m.node("MatMul", {"x", "W2"}, {"b"});
  m.node("MatMul", {"a", "W3"}, {"c0"});
  m.node("Add", {"c0", "bias"}, {"c"});
  m.node("Add", {"c", "b"}, {"s"});
  auto& ln = m.node("LayerNormalization", {"s", "gamma", "beta"}, {"y"});
  auto* axis = ln.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(-1);
  std::string dump;
  const RunProfile p = run_and_compare(m.bytes(), filled({4, 16}, -0.7f, 0.05f), &dump);
  ASSERT_TRUE(p.memory.planned);
  ASSERT_EQ(count_occurrences(dump, "FusedMatMul"), 1) << dump;
  ASSERT_EQ(count_occurrences(dump, "LayerNormalization '"), 1) << dump;
  // Every node makes one output; the residual product writes over b, LayerNorm over that.
  EXPECT_EQ(allocations(p), count_occurrences(dump, " -> ") - 2) << dump;
}

}  // namespace
}  // namespace osprey::testing
