// Item-by-item runs of a batch (runtime/batch_split.h, SessionOptions::batch_split): a separable
// graph gives the same outputs item by item as the whole batch at once and as the reference
// kernels; every obstacle keeps the whole batch and is named; the profile of an item-by-item
// run sums its items.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <thread>

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
  for (const auto& t : four.nodes) EXPECT_EQ(t.runs, 4) << t.name;
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
  // The classifier's weights (80 bytes) outweigh its activations (36 bytes per item): the batch
  // runs whole from the pooling on, where only the pooled map crosses (the Reshape's target is
  // a constant [0, -1] once shape_folding ran).
  if (cpu::last_level_cache_bytes() > 0)
    EXPECT_NE(s->batch_split_summary().find("item by item until ReduceMean"), std::string::npos)
        << s->batch_split_summary();
  else
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

TEST(BatchSplit, WeightTrafficCountsWeightsAndItemActivations) {
  auto g = import_graph(weight_heavy_model());
  ASSERT_TRUE(g);
  const WeightTraffic t = weight_traffic(*g, infer_shapes(*g, false));
  ASSERT_TRUE(t.known);
  EXPECT_EQ(t.weight_bytes, 64 * 64 * 4);
  EXPECT_EQ(t.act_bytes, 2 * 64 * 4 * 4);
  EXPECT_EQ(t.max_act_bytes, 2 * 64 * 4 * 4);
  // The small CNN: 432 bytes of convolution weights and 80 of the MatMul's against 768 + 1024
  // and 16 + 20 bytes of activations per item (the Reshape to [Shape(g)[0], -1] is inferred as
  // [N, 4]: the batch symbol cancels against g's).
  auto cnn = import_graph(cnn_model());
  ASSERT_TRUE(cnn);
  const WeightTraffic c = weight_traffic(*cnn, infer_shapes(*cnn, false));
  ASSERT_TRUE(c.known);
  EXPECT_EQ(c.weight_bytes, 4 * 3 * 9 * 4 + 4 * 5 * 4);
  EXPECT_EQ(c.act_bytes, (3 + 4) * 64 * 4 + (4 + 5) * 4);
  EXPECT_EQ(weight_traffic(*cnn, infer_shapes(*cnn, false), 6).weight_bytes, 4 * 5 * 4);  // from the Reshape on
  // A spatial size only known at run time: unknown traffic.
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 64, -1, -1}).output("y");
  m.initializer("W", {64, 64, 1, 1}, cyclic_values(64 * 64, -0.2f, 0.011f, 13));
  m.node("Conv", {"x", "W"}, {"y"});
  auto dyn = import_graph(m.bytes());
  ASSERT_TRUE(dyn);
  EXPECT_FALSE(weight_traffic(*dyn, infer_shapes(*dyn, false)).known);
}

TEST(BatchSplit, WholeBatchLimitNeedsDominantWeightsAndCachedActivations) {
  WeightTraffic t;
  t.known = true;
  t.weight_bytes = 94e6, t.act_bytes = 86e6, t.max_act_bytes = 4.6e6;  // ResNet50-like
  // Four times 4.6 MB per item within the cache: 27 items in 480 MiB, 1 in 32 MiB.
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 27);
  EXPECT_EQ(whole_batch_limit(t, int64_t{32} << 20), 1);
  EXPECT_EQ(whole_batch_limit(t, 0), 0);                     // cache size unknown
  t.weight_bytes = 8.8e6, t.act_bytes = 53e6;                // MobileNetV2-like
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 0);
  t.weight_bytes = 26.5e6;                                   // exactly half
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 27);
  t.known = false;
  EXPECT_EQ(whole_batch_limit(t, int64_t{480} << 20), 0);
}

// The profile entry of the first node whose op type contains `op`.
const NodeTiming* find_node(const RunProfile& p, const std::string& op) {
  for (const auto& t : p.nodes)
    if (t.op_type.find(op) != std::string::npos) return &t;
  return nullptr;
}

TEST(BatchSplit, AutoRunsAWeightHeavyBatchWholeWithinTheCache) {
  auto s = load(weight_heavy_model(), BatchSplit::kAuto);
  auto split = load(weight_heavy_model(), BatchSplit::kOn);
  ASSERT_TRUE(s && split);
  const int64_t llc = cpu::last_level_cache_bytes();
  // 2 KiB per item: the whole batch fits any last-level cache up to llc / 8 KiB items.
  const bool whole = llc > 0;
  const std::string summary = s->batch_split_summary();
  if (whole) {
    EXPECT_EQ(summary.rfind("up to " + std::to_string(llc / 8192) + " items", 0), 0u) << summary;
    EXPECT_NE(summary.find("whole batch"), std::string::npos) << summary;
  } else {
    EXPECT_EQ(summary, "item by item");
  }
  const Tensor x = ramp({4, 64, 2, 2}, -1.0f, 0.0031f);
  RunProfile p, q;
  auto a = s->run({{"x", x}}, &p);
  auto b = split->run({{"x", x}}, &q);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string();
  // The convolution runs once on the whole batch (the layout changes before it may run item by
  // item: they hold no weights).
  const NodeTiming* conv = find_node(p, "Conv");
  ASSERT_TRUE(conv != nullptr && !conv->input_shapes.empty() && !conv->input_shapes[0].empty());
  EXPECT_EQ(conv->runs, whole ? 1 : 4);
  EXPECT_EQ(conv->input_shapes[0][0], whole ? 4 : 1);
  const NodeTiming* item_conv = find_node(q, "Conv");
  ASSERT_TRUE(item_conv != nullptr);
  EXPECT_EQ(item_conv->runs, 4);
  EXPECT_EQ(q.items, 4);
  expect_close((*a)[0].second, (*b)[0].second, "whole vs split");
}

// x [N, 8, 16, 16] -> Conv 1x1 (8 -> 8) -> + x -> Relu -> GlobalAveragePool -> Conv 1x1 (8 ->
// 1024): the first convolution moves 16 KiB of activations per item for 256 bytes of weights,
// the second 4128 bytes for 32 KiB.
std::string heavy_tail_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 8, 16, 16}).output("y");
  m.initializer("W1", {8, 8, 1, 1}, cyclic_values(64, -0.3f, 0.017f, 7));
  m.initializer("W2", {1024, 8, 1, 1}, cyclic_values(1024 * 8, -0.2f, 0.009f, 17));
  m.node("Conv", {"x", "W1"}, {"a"});
  m.node("Add", {"a", "x"}, {"s"});
  m.node("Relu", {"s"}, {"r"});
  m.node("GlobalAveragePool", {"r"}, {"p"});
  m.node("Conv", {"p", "W2"}, {"y"});
  return m.bytes();
}

int value_id(const ir::Graph& g, const std::string& name) {
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].name == name) return static_cast<int>(i);
  return ir::kNoValue;
}

TEST(BatchSplit, CutsWhereOneBatchedValueCrossesBeforeTheWeightHeavyNodes) {
  auto g = import_graph(heavy_tail_model());
  ASSERT_TRUE(g);
  const ShapeFacts facts = infer_shapes(*g, false);
  const int64_t llc = int64_t{1} << 20;
  const std::vector<BatchCut> cuts = batch_cuts(*g, facts, llc);
  // Before Relu, GlobalAveragePool and the second Conv (one value crosses each; before Add, a
  // and x both do), and the whole graph, whose first Conv moves more than its weights save.
  ASSERT_EQ(cuts.size(), 4u);
  const double tail_gain = 2.0 * 1024 * 8 * 4 - (8 * 4 + 1024 * 4);
  EXPECT_EQ(cuts[0].node, 4u);  // equal gains: the latest cut, whose gathered value is smallest
  EXPECT_EQ(cuts[0].value, value_id(*g, "p"));
  EXPECT_EQ(cuts[0].gain, tail_gain);
  EXPECT_EQ(cuts[0].whole_up_to, llc / (4 * (8 * 4 + 1024 * 4)));
  EXPECT_EQ(cuts[1].node, 3u);
  EXPECT_EQ(cuts[1].value, value_id(*g, "r"));
  EXPECT_EQ(cuts[2].node, 2u);
  EXPECT_EQ(cuts[2].value, value_id(*g, "s"));
  EXPECT_EQ(cuts[3].node, 0u);
  EXPECT_EQ(cuts[3].value, ir::kNoValue);
  EXPECT_EQ(cuts[3].gain, tail_gain + 2.0 * 64 * 4 - 2 * 8 * 256 * 4);
  EXPECT_EQ(cuts[3].whole_up_to, llc / (4 * 2 * 8 * 256 * 4));
  EXPECT_TRUE(batch_cuts(*g, facts, 0).empty());  // cache size unknown
  // A graph that is not separable has none.
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 8, 16, 16}).output("y");
  m.initializer("W", {8, 8, 1, 1}, cyclic_values(64, -0.3f, 0.017f, 7));
  m.node("Conv", {"x", "W"}, {"a"});
  set_ints(m.node("ReduceMean", {"a"}, {"y"}), "axes", {0});  // mixes the items
  auto mixed = import_graph(m.bytes());
  ASSERT_TRUE(mixed);
  EXPECT_TRUE(batch_cuts(*mixed, infer_shapes(*mixed, false), llc).empty());
}

TEST(BatchSplit, ACutRunsItsHeadItemByItemAndItsTailOnTheWholeBatch) {
  const std::string bytes = heavy_tail_model();
  auto cut = load(bytes, BatchSplit::kAuto), split = load(bytes, BatchSplit::kOn),
       whole = load(bytes, BatchSplit::kOff);
  ASSERT_TRUE(cut && split && whole);
  const bool cached = cpu::last_level_cache_bytes() > 0;
  const std::string summary = cut->batch_split_summary();
  EXPECT_EQ(summary.find("item by item until") != std::string::npos, cached) << summary;
  for (int64_t n : {2, 5}) {
    SCOPED_TRACE(n);
    const Tensor x = ramp({n, 8, 16, 16}, -1.5f, 0.0023f);
    RunProfile p;
    auto a = cut->run({{"x", x}}, &p);
    auto b = split->run({{"x", x}});
    auto c = whole->run({{"x", x}});
    ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().to_string();
    ASSERT_EQ((*a)[0].second.shape(), (Shape{n, 1024, 1, 1}));
    expect_close((*a)[0].second, (*b)[0].second, "cut vs item by item");
    expect_close((*a)[0].second, (*c)[0].second, "cut vs whole");
    const float* y = (*a)[0].second.data<float>();
    EXPECT_NE(y[0], y[1024 * (n - 1)]) << "items differ";
    EXPECT_EQ(p.items, n);
    // The residual convolution ran item by item, the last one once on the whole batch.
    std::vector<const NodeTiming*> convs;
    for (const auto& t : p.nodes)
      if (t.op_type.find("Conv") != std::string::npos) convs.push_back(&t);
    ASSERT_EQ(convs.size(), 2u);
    EXPECT_EQ(convs[0]->runs, n);
    EXPECT_EQ(convs[0]->input_shapes[0][0], 1);
    EXPECT_EQ(convs[1]->runs, cached ? 1 : n);
    EXPECT_EQ(convs[1]->input_shapes[0][0], cached ? n : 1);
  }
}

TEST(BatchSplit, ConcurrentRunsOfACutStayCorrect) {
  // Runs of batches of 2 and 3 on one session from four threads: each span's planned memory is
  // its own, so no run sees another's items.
  auto cut = load(heavy_tail_model(), BatchSplit::kAuto), whole = load(heavy_tail_model(), BatchSplit::kOff);
  ASSERT_TRUE(cut && whole);
  std::vector<Tensor> inputs, expected;
  for (int64_t i = 0; i < 4; ++i) {
    inputs.push_back(ramp({2 + i % 2, 8, 16, 16}, -1.0f + 0.3f * static_cast<float>(i), 0.0017f));
    auto r = whole->run({{"x", inputs.back()}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    expected.push_back((*r)[0].second);
  }
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int k = 0; k < 20; ++k) {
        auto r = cut->run({{"x", inputs[t]}});
        if (!r.ok() || (*r)[0].second.shape() != expected[t].shape()) {
          ++wrong[t];
          continue;
        }
        const float* a = (*r)[0].second.data<float>();
        const float* b = expected[t].data<float>();
        for (int64_t e = 0; e < expected[t].numel(); ++e)
          if (std::fabs(a[e] - b[e]) > 1e-4f * (1.0f + std::fabs(b[e]))) {
            ++wrong[t];
            break;
          }
      }
    });
  for (auto& th : threads) th.join();
  for (size_t t = 0; t < 4; ++t) EXPECT_EQ(wrong[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace osprey::passes::testing
