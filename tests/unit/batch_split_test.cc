// Item-by-item runs of a batch (runtime/batch_split.h, SessionOptions::batch_split): a separable
// graph gives the same outputs item by item as the whole batch at once and as the reference
// kernels; every obstacle keeps the whole batch and is named; the profile of an item-by-item
// run sums its items.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "passes_test_util.h"
#include "runtime/batch_split.h"
#include "threading/cpu_info.h"

namespace osprey::passes::testing {
namespace {

void set_ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}

void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

// x [N,3,8,8] -> Conv 3x3 (4) -> Relu -> MaxPool 2x2 -> GlobalAveragePool -> Reshape to
// [Shape(x)[0], -1] (the Shape/Gather/Unsqueeze/Concat chain of x.view(x.size(0), -1)) ->
// MatMul [4,5] + bias -> Softmax; and a second output: the pooled map, flattened.
std::string cnn_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 3, 8, 8}).output("y").output("f");
  m.initializer("W", {4, 3, 3, 3}, cyclic_values(4 * 3 * 9, -0.5f, 0.13f, 11));
  m.initializer("B", {4}, {0.1f, -0.2f, 0.05f, 0.3f});
  m.initializer("M", {4, 5}, cyclic_values(20, -1.0f, 0.21f, 9));
  m.initializer("bias", {5}, {0.5f, -0.5f, 0.25f, 0.0f, 1.0f});
  int64_initializer(m, "zero", {}, {0});
  int64_initializer(m, "axes0", {1}, {0});
  int64_initializer(m, "minus1", {1}, {-1});
  set_ints(m.node("Conv", {"x", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"});
  auto& pool = m.node("MaxPool", {"r"}, {"p"});
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {2, 2});
  m.node("GlobalAveragePool", {"p"}, {"g"});
  m.node("Shape", {"g"}, {"s"});
  m.node("Gather", {"s", "zero"}, {"n"});
  m.node("Unsqueeze", {"n", "axes0"}, {"n1"});
  m.node("Concat", {"n1", "minus1"}, {"shape"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  m.node("Reshape", {"g", "shape"}, {"v"});
  m.node("MatMul", {"v", "M"}, {"mm"});
  m.node("Add", {"mm", "bias"}, {"logits"});
  m.node("Softmax", {"logits"}, {"y"});
  set_int(m.node("Flatten", {"p"}, {"f"}), "axis", 1);
  return m.bytes();
}

std::unique_ptr<Session> load(const std::string& bytes, BatchSplit split, int level = 2) {
  SessionOptions o;
  o.batch_split = split;
  o.optimization_level = level;
  auto s = Session::load_from_bytes(bytes, o);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(BatchSplit, ItemByItemMatchesTheWholeBatchAndTheReference) {
  const std::string bytes = cnn_model();
  auto split = load(bytes, BatchSplit::kOn), whole = load(bytes, BatchSplit::kOff),
       ref = load(bytes, BatchSplit::kOff, 0);
  ASSERT_TRUE(split && whole && ref);
  EXPECT_EQ(split->batch_split_summary(), "item by item");
  EXPECT_EQ(whole->batch_split_summary(), "whole batch (batch_split is off)");
  for (int64_t n : {1, 3, 5}) {
    SCOPED_TRACE(n);
    const Tensor x = ramp({n, 3, 8, 8}, -2.0f, 0.0137f);
    auto a = split->run({{"x", x}});
    auto b = whole->run({{"x", x}});
    auto c = ref->run({{"x", x}});
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().to_string();
    ASSERT_EQ(a->size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ((*a)[k].first, (*b)[k].first);
      EXPECT_EQ((*a)[k].second.shape()[0], n);
      expect_close((*a)[k].second, (*b)[k].second, "split vs whole " + (*a)[k].first);
      expect_close((*a)[k].second, (*c)[k].second, "split vs reference " + (*a)[k].first);
    }
    // Items differ (the ramp), so a copy of item 0 everywhere would be caught.
    if (n > 1) {
      const Tensor& y = (*a)[0].second;
      EXPECT_NE(y.data<float>()[0], y.data<float>()[5]);
    }
  }
}

TEST(BatchSplit, ProfileSumsTheItems) {
  auto split = load(cnn_model(), BatchSplit::kOn);
  ASSERT_TRUE(split);
  RunProfile one, four;
  ASSERT_TRUE(split->run({{"x", ramp({1, 3, 8, 8})}}, &one).ok());
  ASSERT_TRUE(split->run({{"x", ramp({4, 3, 8, 8})}}, &four).ok());
  EXPECT_EQ(one.items, 1);
  EXPECT_EQ(four.items, 4);
  ASSERT_EQ(one.nodes.size(), four.nodes.size());
  // The same profile object, reused for a batch of 1, reads one item again.
  RunProfile reused = four;
  ASSERT_TRUE(split->run({{"x", ramp({1, 3, 8, 8})}}, &reused).ok());
  EXPECT_EQ(reused.items, 1);
  EXPECT_EQ(reused.nodes.size(), one.nodes.size());
  for (const auto& t : four.nodes)
    if (!t.input_shapes.empty() && !t.input_shapes[0].empty() && t.op_type.find("Conv") != std::string::npos) {
      EXPECT_EQ(t.input_shapes[0][0], 1) << "an item's shapes";
    }
}

TEST(BatchSplit, AutoSplitsOnlyConvolutionalGraphs) {
  auto s = load(cnn_model(), BatchSplit::kAuto);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->batch_split_summary(), "item by item");
  // No convolution: batched products reuse their weights, so the batch stays whole.
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4}).output("y");
  m.initializer("M", {4, 2}, cyclic_values(8, -1.0f, 0.3f, 5));
  m.node("MatMul", {"x", "M"}, {"y"});
  auto mm = load(m.bytes(), BatchSplit::kAuto);
  ASSERT_TRUE(mm);
  EXPECT_NE(mm->batch_split_summary().find("no convolution"), std::string::npos) << mm->batch_split_summary();
  auto forced = load(m.bytes(), BatchSplit::kOn);
  ASSERT_TRUE(forced);
  EXPECT_EQ(forced->batch_split_summary(), "item by item");
}

// x [N,4] -> <node> -> y, with the obstacle `why` is expected to name.
struct Obstacle {
  const char* name;
  std::function<void(ModelBuilder&)> build;
  const char* why;
  std::vector<int64_t> x_dims = {-1, 4};
};

TEST(BatchSplit, ObstaclesKeepTheWholeBatchAndAreNamed) {
  const std::vector<Obstacle> cases = {
      {"reduce_over_batch",
       [](ModelBuilder& m) { set_ints(m.node("ReduceMean", {"x"}, {"y"}), "axes", {0}); },
       "reduces along axis 0"},
      {"reduce_everything", [](ModelBuilder& m) { m.node("ReduceSum", {"x"}, {"y"}); }, "reduces every axis"},
      {"softmax_over_batch", [](ModelBuilder& m) { set_int(m.node("Softmax", {"x"}, {"y"}), "axis", 0); },
       "normalizes along axis 0"},
      {"reshape_fixed_batch",
       [](ModelBuilder& m) {
         int64_initializer(m, "shape", {2}, {2, -1});
         m.node("Reshape", {"x", "shape"}, {"y"});
       },
       "does not keep dim 0"},
      {"transpose_moves_batch",
       [](ModelBuilder& m) { set_ints(m.node("Transpose", {"x"}, {"y"}), "perm", {1, 0}); }, "moves axis 0"},
      {"batched_weights", [](ModelBuilder& m) { m.node("MatMul", {"x", "x"}, {"y"}); },
       "B or the bias is not constant"},
      {"broadcast_along_batch",
       [](ModelBuilder& m) {
         m.initializer("k", {3, 4}, cyclic_values(12, 0.0f, 1.0f, 12));
         m.node("Add", {"x", "k"}, {"y"});
       },
       "broadcasts along axis 0"},
      {"batch_size_as_data",
       [](ModelBuilder& m) {
         int64_initializer(m, "zero", {}, {0});
         m.node("Shape", {"x"}, {"s"});
         m.node("Gather", {"s", "zero"}, {"n"});
         m.node("Cast", {"n"}, {"nf"}).add_attribute()->CopyFrom([] {
           onnx::AttributeProto a;
           a.set_name("to");
           a.set_type(onnx::AttributeProto::INT);
           a.set_i(onnx::TensorProto::FLOAT);
           return a;
         }());
         m.node("Mul", {"x", "nf"}, {"y"});
       },
       "reads the batch size"},
      {"weights_add_leading_axes",
       [](ModelBuilder& m) {
         m.initializer("b3", {3, 4, 2}, cyclic_values(24, -1.0f, 0.1f, 24));
         m.node("MatMul", {"x", "b3"}, {"y"});
       },
       "B broadcasts along axis 0"},
      {"dropout_with_ratio",
       [](ModelBuilder& m) {
         m.initializer("ratio", {}, {0.5f});
         m.node("Dropout", {"x", "ratio"}, {"y"});
       },
       "may drop at random"},
      {"fixed_first_dim", [](ModelBuilder& m) { m.node("Relu", {"x"}, {"y"}); }, "no named symbolic first dim",
       {2, 4}},
      {"unknown_op", [](ModelBuilder& m) { m.node("CumSum", {"x", "x"}, {"y"}); }, "not an op the split knows"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    ModelBuilder m;
    m.input("x", onnx::TensorProto::FLOAT, c.x_dims).output("y");
    c.build(m);
    SessionOptions o;
    o.batch_split = BatchSplit::kOn;
    auto s = Session::load_from_bytes(m.bytes(), o);
    if (!s.ok()) {
      // Some cases (CumSum with a float axis) may be refused at load; then nothing to check.
      EXPECT_STREQ(c.name, "unknown_op") << s.status().to_string();
      continue;
    }
    const std::string summary = (*s)->batch_split_summary();
    EXPECT_EQ(summary.rfind("whole batch (", 0), 0u) << summary;
    EXPECT_NE(summary.find(c.why), std::string::npos) << summary;
  }
}

}  // namespace
}  // namespace osprey::passes::testing

namespace osprey::passes::testing {
namespace {

// x [N, 64, 2, 2] -> Conv 1x1 (64 -> 64) -> Relu: 16 KiB of weights against 2 KiB of input and
// output per item, so a whole batch reuses what dominates.
std::string weight_heavy_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 64, 2, 2}).output("y");
  m.initializer("W", {64, 64, 1, 1}, cyclic_values(64 * 64, -0.2f, 0.011f, 13));
  m.node("Conv", {"x", "W"}, {"c"});
  m.node("Relu", {"c"}, {"y"});
  return m.bytes();
}

TEST(BatchSplit, ConvTrafficCountsWeightsAndItemActivations) {
  auto g = import_graph(weight_heavy_model());
  ASSERT_TRUE(g);
  const ConvTraffic t = conv_traffic(*g, infer_shapes(*g, false));
  ASSERT_TRUE(t.known);
  EXPECT_EQ(t.weight_bytes, 64 * 64 * 4);
  EXPECT_EQ(t.act_bytes, 2 * 64 * 4 * 4);
  EXPECT_EQ(t.max_act_bytes, 2 * 64 * 4 * 4);
  // The small CNN: 432 bytes of weights against 768 + 1024 of activations per item.
  auto cnn = import_graph(cnn_model());
  ASSERT_TRUE(cnn);
  const ConvTraffic c = conv_traffic(*cnn, infer_shapes(*cnn, false));
  ASSERT_TRUE(c.known);
  EXPECT_EQ(c.weight_bytes, 4 * 3 * 9 * 4);
  EXPECT_EQ(c.act_bytes, (3 + 4) * 64 * 4);
  // A spatial size only known at run time: unknown traffic.
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 64, -1, -1}).output("y");
  m.initializer("W", {64, 64, 1, 1}, cyclic_values(64 * 64, -0.2f, 0.011f, 13));
  m.node("Conv", {"x", "W"}, {"y"});
  auto dyn = import_graph(m.bytes());
  ASSERT_TRUE(dyn);
  EXPECT_FALSE(conv_traffic(*dyn, infer_shapes(*dyn, false)).known);
}

TEST(BatchSplit, WholeBatchLimitNeedsDominantWeightsAndCachedActivations) {
  ConvTraffic t;
  t.known = true;
  t.weight_bytes = 94e6, t.act_bytes = 86e6, t.max_act_bytes = 4.6e6;  // ResNet50-like
  // Twice 4.6 MB per item within the cache: 54 items in 480 MiB, 3 in 32 MiB.
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 54);
  EXPECT_EQ(whole_batch_limit(t, int64_t{32} << 20), 3);
  EXPECT_EQ(whole_batch_limit(t, 0), 0);                     // cache size unknown
  t.weight_bytes = 8.8e6, t.act_bytes = 53e6;                // MobileNetV2-like
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 0);
  t.weight_bytes = 26.5e6;                                   // exactly half
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 54);
  t.known = false;
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 0);
}

TEST(BatchSplit, AutoRunsAWeightHeavyBatchWholeWithinTheCache) {
  auto s = load(weight_heavy_model(), BatchSplit::kAuto);
  auto split = load(weight_heavy_model(), BatchSplit::kOn);
  ASSERT_TRUE(s && split);
  const int64_t llc = cpu::last_level_cache_bytes();
  // 2 KiB per item: the whole batch fits any last-level cache up to llc / 4 KiB items.
  const bool whole = llc > 0;
  const std::string summary = s->batch_split_summary();
  if (whole)
    EXPECT_EQ(summary.rfind("whole batch up to " + std::to_string(llc / 4096) + " items", 0), 0u) << summary;
  else
    EXPECT_EQ(summary, "item by item");
  const Tensor x = ramp({4, 64, 2, 2}, -1.0f, 0.0031f);
  RunProfile p, q;
  auto a = s->run({{"x", x}}, &p);
  auto b = split->run({{"x", x}}, &q);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string();
  EXPECT_EQ(p.items, whole ? 1 : 4);
  EXPECT_EQ(q.items, 4);
  expect_close((*a)[0].second, (*b)[0].second, "whole vs split");
}

}  // namespace
}  // namespace osprey::passes::testing
