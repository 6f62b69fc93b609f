// SessionOptions::memory_limit_bytes: the bytes of one run's live intermediates, counted from
// the values its nodes make to their release. The caller's inputs are not intermediates, and
// releasing them must not make room for more (the limit would pass its bound by their size).
#include <gtest/gtest.h>

#include <string>

#include "model_builder.h"
#include "osprey/session.h"

namespace osprey {
namespace {

using testing::ModelBuilder;
constexpr int kF = onnx::TensorProto::FLOAT;
constexpr int64_t kFloats = int64_t{1} << 18;  // 1 MiB of float32
constexpr int64_t kMiB = int64_t{1} << 20;

// Loads `m` as built (no optimization) under `limit` and runs it on a 1 MiB float32 `input`.
Result<std::vector<NamedTensor>> run_with_limit(const ModelBuilder& m, const char* input, int64_t limit) {
  SessionOptions opts;
  opts.optimization_level = 0;
  opts.memory_limit_bytes = limit;
  auto s = Session::load_from_bytes(m.bytes(), opts);
  if (!s.ok()) return s.status();
  return (*s)->run({{input, Tensor(DType::kFloat32, {kFloats})}});
}

// x (1 MiB, the caller's) -> a = Neg(x) (1 MiB) -> y = Concat(a, a) (2 MiB): a and y are live
// together after the Concat, 3 MiB, while x is released after the Neg.
Result<std::vector<NamedTensor>> run_neg_concat(int64_t limit) {
  ModelBuilder m;
  m.input("x", kF, {kFloats}).output("y");
  m.node("Neg", {"x"}, {"a"});
  auto& cat = m.node("Concat", {"a", "a"}, {"y"}, "cat");
  auto* axis = cat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  return run_with_limit(m, "x", limit);
}

TEST(MemoryLimitTest, CountsTheRunsIntermediatesNotItsReleasedInputs) {
  auto fits = run_neg_concat(3 * kMiB);
  ASSERT_TRUE(fits.ok()) << fits.status().to_string();
  EXPECT_EQ((*fits)[0].second.numel(), 2 * kFloats);
  auto over = run_neg_concat(3 * kMiB - 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("cat"), std::string::npos) << over.status().message();
  EXPECT_NE(over.status().message().find(std::to_string(3 * kMiB) + " bytes"), std::string::npos)
      << over.status().message();
}

// A Loop of `trips` iterations carrying v (1 MiB): the body makes v2 = Neg(v) and, with
// `temp`, also a 4 MiB Tile of v that it drops. What a body run leaves (its outputs, the
// Loop's to hold) does not stay counted from one iteration to the next.
Result<std::vector<NamedTensor>> run_loop(int64_t trips, bool temp, int64_t limit) {
  ModelBuilder m;
  m.input("v", kF, {kFloats}).output("v_out");
  m.initializer_i64("trips", {}, {trips});
  m.initializer_i64("reps", {1}, {4});
  auto& loop = m.node("Loop", {"trips", "", "v"}, {"v_out"}, "loop");
  auto* g = ModelBuilder::subgraph(loop, "body", {"i", "cond", "bv"});
  auto node = [&](const char* op, std::vector<std::string> ins, const char* out) {
    ModelBuilder::subgraph_node(g, op, ins, out);
  };
  node("Identity", {"cond"}, "cond_out");
  node("Neg", {"bv"}, "bv2");
  if (temp) {
    node("Tile", {"bv", "reps"}, "big");
    node("ReduceMax", {"big"}, "peak");
  }
  g->add_output()->set_name("cond_out");
  g->add_output()->set_name("bv2");
  return run_with_limit(m, "v", limit);
}

TEST(MemoryLimitTest, LoopIterationsDoNotAddUp) {
  auto r = run_loop(100, /*temp=*/false, 3 * kMiB);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)[0].second.numel(), kFloats);
  auto over = run_loop(3, /*temp=*/true, 3 * kMiB);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("big"), std::string::npos) << over.status().message();
}

}  // namespace
}  // namespace osprey
