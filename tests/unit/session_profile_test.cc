// Session::run with a RunProfile: one timing per executed top-level node, in order, with the
// shapes it saw (and one per subgraph node, by path, summing its runs), and the same outputs as an unprofiled run. The FLOPs counted from those shapes
// (cli/flop_count.h) match hand-computed values, with and without the fusion passes.
#include <gtest/gtest.h>

#include "flop_count.h"
#include "kernels/cpu/panel_product.h"
#include "model_builder.h"
#include "test_models.h"
#include "osprey/session.h"

namespace osprey {
namespace {

using testing::ModelBuilder;
using testing::load_test_session;
using testing::mlp_model;
constexpr int kF = onnx::TensorProto::FLOAT;


// y = Relu(Conv(x, W)), x: float[1,2,5,5], W [3,2,3,3], no padding: Y [1,3,3,3].
std::string conv_model() {
  ModelBuilder m;
  m.input("x", kF, {1, 2, 5, 5}).output("y");
  std::vector<float> w(54);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 7) - 0.1f;
  m.initializer("W", {3, 2, 3, 3}, w);
  m.node("Conv", {"x", "W"}, {"c"});
  m.node("Relu", {"c"}, {"y"});
  return m.bytes();
}

Tensor filled(Shape shape) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = 0.3f * static_cast<float>(i % 5) - 0.6f;
  return t;
}

void expect_same(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    ASSERT_EQ(a[i].second.shape(), b[i].second.shape());
    for (int64_t k = 0; k < a[i].second.numel(); ++k)
      EXPECT_EQ(a[i].second.data<float>()[k], b[i].second.data<float>()[k]) << k;
  }
}

TEST(SessionProfile, OneTimingPerExecutedNodeWithShapes) {
  auto s = load_test_session(mlp_model(), 0);  // no passes: the three nodes run as written
  ASSERT_TRUE(s);
  const std::vector<NamedTensor> in = {{"x", filled({2, 4})}};
  auto plain = s->run(in);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  RunProfile p;
  p.nodes.resize(7);  // stale entries are cleared by the run
  auto timed = s->run(in, &p);
  ASSERT_TRUE(timed.ok()) << timed.status().to_string();
  expect_same(*plain, *timed);
  ASSERT_EQ(p.nodes.size(), 3u);
  const char* ops[] = {"MatMul", "Add", "Relu"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(p.nodes[i].op_type, ops[i]);
    EXPECT_EQ(p.nodes[i].domain, "");
    EXPECT_GE(p.nodes[i].ms, 0.0);
  }
  EXPECT_EQ(p.nodes[0].name, "MatMul_xw");
  ASSERT_EQ(p.nodes[0].input_shapes.size(), 2u);
  EXPECT_EQ(p.nodes[0].input_shapes[0], (Shape{2, 4}));
  EXPECT_EQ(p.nodes[0].input_shapes[1], (Shape{4, 3}));
  ASSERT_EQ(p.nodes[0].output_shapes.size(), 1u);
  EXPECT_EQ(p.nodes[0].output_shapes[0], (Shape{2, 3}));
  // 2 x 3 outputs, K = 4 multiply-adds each.
  const auto flops = cli::count_flops(p.nodes);
  EXPECT_EQ(flops.flops, 2.0 * 2 * 3 * 4);
  EXPECT_EQ(flops.counted_nodes, 1);
  EXPECT_EQ(flops.unknown_nodes, 0);
  // A null profile is a plain run.
  auto again = s->run(in, nullptr);
  ASSERT_TRUE(again.ok());
  expect_same(*plain, *again);
}

// A Loop of 5 iterations whose body runs a MatMul (v [1,4] x W [4,4]) then a Relu: the top
// level times the Loop once; the body's nodes are timed inside it, one entry each summing its 5
// runs, named by their path, with their shapes (so their FLOPs count too).
TEST(SessionProfile, SubgraphNodesAreTimedByPath) {
  ModelBuilder m;
  m.input("v", kF, {1, 4}).output("v_out");
  m.initializer_i64("trips", {}, {5});
  m.initializer("W", {4, 4}, std::vector<float>(16, 0.25f));
  auto& loop = m.node("Loop", {"trips", "", "v"}, {"v_out"}, "loop");
  auto* g = ModelBuilder::subgraph(loop, "body", {"i", "cond", "bv"});
  auto node = [&](const char* op, std::vector<std::string> ins, const char* out) {
    ModelBuilder::subgraph_node(g, op, ins, out);
  };
  node("Identity", {"cond"}, "cond_out");
  node("MatMul", {"bv", "W"}, "mm");
  node("Relu", {"mm"}, "bv2");
  g->add_output()->set_name("cond_out");
  g->add_output()->set_name("bv2");
  auto s = load_test_session(m.bytes(), 0);
  ASSERT_TRUE(s);
  const std::vector<NamedTensor> in = {{"v", filled({1, 4})}};
  auto plain = s->run(in);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  RunProfile p;
  p.subgraph_nodes.resize(4);  // stale entries are cleared by the run
  for (int run = 0; run < 2; ++run) {  // the second run starts afresh
    auto timed = s->run(in, &p);
    ASSERT_TRUE(timed.ok()) << timed.status().to_string();
    expect_same(*plain, *timed);
    ASSERT_EQ(p.nodes.size(), 1u);
    EXPECT_EQ(p.nodes[0].op_type, "Loop");
    ASSERT_EQ(p.subgraph_nodes.size(), 3u);
    const char* names[] = {"loop > cond_out", "loop > mm", "loop > bv2"};
    double inside = 0;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ(p.subgraph_nodes[i].name, names[i]);
      EXPECT_EQ(p.subgraph_nodes[i].runs, 5);
      inside += p.subgraph_nodes[i].ms;
    }
    EXPECT_LE(inside, p.nodes[0].ms);  // inside the Loop's time
    EXPECT_EQ(p.subgraph_nodes[1].op_type, "MatMul");
    ASSERT_EQ(p.subgraph_nodes[1].input_shapes.size(), 2u);
    EXPECT_EQ(p.subgraph_nodes[1].input_shapes[0], (Shape{1, 4}));
    // 5 runs of 1 x 4 outputs, K = 4.
    EXPECT_EQ(cli::count_flops(p.subgraph_nodes).flops, 5 * 2.0 * 4 * 4);
  }
}

TEST(SessionProfile, OptimizedGraphTimesItsFusedNodesAndKeepsTheFlops) {
  const std::vector<NamedTensor> in = {{"x", filled({1, 2, 5, 5})}};
  auto ref = load_test_session(conv_model(), 0);
  auto fast = load_test_session(conv_model(), 2);
  ASSERT_TRUE(ref && fast);
  RunProfile pr, pf;
  auto a = ref->run(in, &pr);
  auto b = fast->run(in, &pf);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(pr.nodes.size(), 2u);
  ASSERT_FALSE(pf.nodes.empty());
  for (const auto& n : pf.nodes) EXPECT_GE(n.ms, 0.0) << n.op_type;
  // 27 outputs x (2 channels x 3 x 3) multiply-adds, however the optimizer rewrote the Conv.
  EXPECT_EQ(cli::count_flops(pr.nodes).flops, 2.0 * 27 * 18);
  EXPECT_EQ(cli::count_flops(pf.nodes).flops, 2.0 * 27 * 18);
  ASSERT_EQ(a->size(), b->size());
  const Tensor &ya = (*a)[0].second, &yb = (*b)[0].second;
  ASSERT_EQ(ya.shape(), yb.shape());
  for (int64_t k = 0; k < ya.numel(); ++k)
    EXPECT_NEAR(ya.data<float>()[k], yb.data<float>()[k], 1e-5);
}

// x [1,64,14,14] -> Conv 3x3 (64, pads 1) -> y: the profile says which form the convolution
// ran in, our F(4x4) Winograd where the CPU runs it (AVX-512), a oneDNN implementation otherwise;
// with Winograd off, oneDNN's direct one.
TEST(SessionProfile, ConvolutionsSayWhichFormRanThem) {
  ModelBuilder m;
  m.input("x", kF, {1, 64, 14, 14}).output("y");
  std::vector<float> w(64 * 64 * 9);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(i % 11) - 0.05f;
  m.initializer("W", {64, 64, 3, 3}, w);
  auto& conv = m.node("Conv", {"x", "W"}, {"y"});
  auto* pads = conv.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  const std::vector<NamedTensor> in = {{"x", filled({1, 64, 14, 14})}};
  for (const Winograd mode : {Winograd::kAuto, Winograd::kOff}) {
    SCOPED_TRACE(mode == Winograd::kAuto ? "auto" : "off");
    SessionOptions o;
    o.threads = 1;
    o.winograd = mode;
    auto s = Session::load_from_bytes(m.bytes(), o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    RunProfile p;
    ASSERT_TRUE((*s)->run(in, &p).ok());
    std::string form;
    for (const auto& n : p.nodes)
      if (n.op_type == "FusedConv" || n.op_type == "Conv") form = n.kernel;
    if (mode == Winograd::kAuto && cpu::panel_product_supported()) {
      EXPECT_EQ(form, "winograd F(4x4, 3x3)");
    } else {
      EXPECT_FALSE(form.empty());
      EXPECT_EQ(form.find("winograd"), std::string::npos) << form;
    }
  }
}

TEST(SessionProfile, BadInputFailsTheSameWay) {
  auto s = load_test_session(mlp_model(), 0);
  ASSERT_TRUE(s);
  RunProfile p;
  auto r = s->run({{"x", filled({2, 5})}}, &p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("input 'x'"), std::string::npos) << r.status().to_string();
  EXPECT_TRUE(p.nodes.empty());
}

}  // namespace
}  // namespace osprey
