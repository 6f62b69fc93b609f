// Session: loading, input validation, limits and concurrent runs.
#include "osprey/session.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "model_builder.h"
#include "passes_test_util.h"
#include "test_models.h"

namespace osprey {
namespace {

using testing::ModelBuilder;
using testing::external_data_model;
using testing::mlp_model;
constexpr int kF = onnx::TensorProto::FLOAT;


Tensor filled(Shape shape, float start) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = start + 0.25f * static_cast<float>(i % 7);
  return t;
}

TEST(SessionTest, RunsAndReportsMetadata) {
  auto s = Session::load_from_bytes(mlp_model());
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_EQ((*s)->inputs().size(), 1u);  // initializers are not inputs
  EXPECT_EQ((*s)->inputs()[0].to_string(), "x: float32[N,4]");
  EXPECT_EQ((*s)->stats().parameter_count, 15);
  auto out = (*s)->run({{"x", filled({2, 4}, -1.0f)}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  const Tensor& y = (*out)[0].second;
  ASSERT_EQ(y.shape(), (Shape{2, 3}));
  // Row 0 of x: -1, -0.75, -0.5, -0.25; column 0 of W: -0.5, -0.2, 0.1, 0.4; + 0.1
  const float expect00 = -1.0f * -0.5f + -0.75f * -0.2f + -0.5f * 0.1f + -0.25f * 0.4f + 0.1f;
  EXPECT_NEAR(y.data<float>()[0], std::max(expect00, 0.0f), 1e-6);
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_GE(y.data<float>()[i], 0.0f);
}

TEST(SessionTest, ReportsTheLoadsPhasesAndEachPass) {
  // MatMul + Add + Relu: matmul_add_fusion changes the graph (fewer nodes: a FusedMatMul)
  // and the load report says so; a disabled pass is not listed; the dump
  // callback sees each pass that ran, before and after, the after text of the fusion naming
  // the fused op; level 0 runs none.
  SessionOptions opts;
  opts.disabled_passes = {"gelu_fusion"};
  std::vector<std::string> calls;
  std::string fused_after;
  opts.pass_dump = [&](const std::string& pass, const std::string& stage, const std::string& graph) {
    calls.push_back(pass + ":" + stage);
    if (pass == "matmul_add_fusion" && stage == "after") fused_after = graph;
  };
  auto s = Session::load_from_bytes(mlp_model(), opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const LoadReport& r = (*s)->load_report();
  EXPECT_GT(r.import_ms, 0.0);
  EXPECT_GT(r.optimize_ms, 0.0);
  EXPECT_GT(r.prepare_ms, 0.0);
  ASSERT_FALSE(r.passes.empty());
  const PassReport* fusion = nullptr;
  double pass_ms = 0;
  for (const auto& p : r.passes) {
    EXPECT_NE(p.name, "gelu_fusion");
    if (p.name == "matmul_add_fusion") fusion = &p;
    EXPECT_GE(p.ms, 0.0);
    pass_ms += p.ms;
  }
  EXPECT_LE(pass_ms, r.optimize_ms);
  ASSERT_NE(fusion, nullptr);
  EXPECT_TRUE(fusion->changed);
  EXPECT_LT(fusion->nodes_after, fusion->nodes_before);
  EXPECT_EQ(calls.size(), 2 * r.passes.size());
  EXPECT_EQ(calls.front(), r.passes.front().name + ":before");
  EXPECT_NE(fused_after.find("FusedMatMul"), std::string::npos) << fused_after;
  // Unchanged passes report their node counts as they were.
  for (const auto& p : r.passes)
    if (!p.changed) EXPECT_EQ(p.nodes_before, p.nodes_after) << p.name;

  SessionOptions none;
  none.optimization_level = 0;
  auto s0 = Session::load_from_bytes(mlp_model(), none);
  ASSERT_TRUE(s0.ok()) << s0.status().to_string();
  EXPECT_TRUE((*s0)->load_report().passes.empty());
}

TEST(SessionTest, RejectsTruncatedAndEmptyModels) {
  const std::string good = mlp_model();
  auto s = Session::load_from_bytes(good.substr(0, good.size() / 2));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("not a valid ONNX protobuf"), std::string::npos) << s.status().message();
  EXPECT_FALSE(Session::load_from_bytes("").ok());
  EXPECT_EQ(Session::load("/nonexistent/model.onnx").status().code(), StatusCode::kNotFound);
}

TEST(SessionTest, UnknownOpNamesOpOpsetAndNode) {
  ModelBuilder m(13);
  m.input("x", kF, {1}).output("y");
  m.node("FrobnicateV2", {"x"}, {"y"}, "mystery_node");
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kUnimplemented);
  const std::string& msg = s.status().message();
  EXPECT_NE(msg.find("FrobnicateV2"), std::string::npos) << msg;
  EXPECT_NE(msg.find("opset 13"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mystery_node"), std::string::npos) << msg;
}

TEST(SessionTest, RejectsCyclesAndUndefinedValues) {
  ModelBuilder cyc;
  cyc.input("x", kF, {1}).output("b");
  cyc.node("Add", {"x", "b"}, {"a"});
  cyc.node("Relu", {"a"}, {"b"});
  auto s = Session::load_from_bytes(cyc.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("cycle"), std::string::npos) << s.status().message();

  ModelBuilder undef;
  undef.input("x", kF, {1}).output("y");
  undef.node("Add", {"x", "ghost"}, {"y"});
  s = Session::load_from_bytes(undef.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'ghost'"), std::string::npos) << s.status().message();
}

TEST(SessionTest, MissingExternalDataFileIsNotFound) {
  ModelBuilder m = external_data_model("weights.bin");
  SessionOptions opts;
  opts.external_data_dir = ::testing::TempDir();
  auto s = Session::load_from_bytes(m.bytes(), opts);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kNotFound);
  EXPECT_NE(s.status().message().find("weights.bin"), std::string::npos) << s.status().message();
}

TEST(SessionTest, ReadsExternalData) {
  const std::string dir = ::testing::TempDir() + "/osprey_ext";
  std::filesystem::create_directories(dir);
  const float vals[2] = {1.5f, -2.0f};
  {
    FILE* f = std::fopen((dir + "/w.bin").c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(vals, sizeof(float), 2, f);
    std::fclose(f);
  }
  ModelBuilder m = external_data_model("w.bin");
  SessionOptions opts;
  opts.external_data_dir = dir;
  auto s = Session::load_from_bytes(m.bytes(), opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto out = (*s)->run({{"x", Tensor::from_vector<float>({1, 1})}});
  ASSERT_TRUE(out.ok());
  EXPECT_FLOAT_EQ((*out)[0].second.data<float>()[0], 2.5f);
  EXPECT_FLOAT_EQ((*out)[0].second.data<float>()[1], -1.0f);

  // A location outside the model directory is refused.
  m.proto().mutable_graph()->mutable_initializer(0)->mutable_external_data(0)->set_value("../w.bin");
  EXPECT_EQ(Session::load_from_bytes(m.bytes(), opts).status().code(), StatusCode::kInvalidArgument);
}

TEST(SessionTest, ValidatesInputs) {
  auto s = Session::load_from_bytes(mlp_model());
  ASSERT_TRUE(s.ok());
  const Session& sess = **s;
  auto r = sess.run({{"nope", filled({1, 4}, 0)}});
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("inputs are: x"), std::string::npos) << r.status().message();

  r = sess.run({});
  EXPECT_NE(r.status().message().find("missing input 'x'"), std::string::npos) << r.status().message();

  r = sess.run({{"x", Tensor(DType::kInt64, {1, 4})}});
  EXPECT_NE(r.status().message().find("has type int64, expected float32"), std::string::npos) << r.status().message();

  r = sess.run({{"x", filled({4}, 0)}});
  EXPECT_NE(r.status().message().find("rank 1"), std::string::npos) << r.status().message();

  r = sess.run({{"x", filled({1, 5}, 0)}});
  EXPECT_NE(r.status().message().find("dim 1 must be 4"), std::string::npos) << r.status().message();
}

TEST(SessionTest, SymbolicDimsMustAgreeAcrossInputs) {
  ModelBuilder m;
  m.input("a", kF, {-1}, "n").input("b", kF, {-1}, "n").output("c");
  m.node("Add", {"a", "b"}, {"c"});
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_TRUE(s.ok());
  auto r = (*s)->run({{"a", filled({3}, 0)}, {"b", filled({4}, 0)}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'n'"), std::string::npos) << r.status().message();
}

TEST(SessionTest, ElementLimitRefusesHugeDeclaredShapesBeforeAllocating) {
  ModelBuilder m;
  m.input("x", kF, {1}).output("y");
  auto& big = m.initializer("big", {1 << 20, 1 << 20}, {});  // 2^40 elements, no data
  (void)big;
  m.node("Add", {"x", "big"}, {"y"});
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(s.status().message().find("above the limit"), std::string::npos) << s.status().message();
}

TEST(SessionTest, ElementLimitAppliesToComputedShapes) {
  ModelBuilder m;
  m.input("shape", onnx::TensorProto::INT64, {2}).output("y");
  m.node("ConstantOfShape", {"shape"}, {"y"});
  SessionOptions opts;
  opts.max_tensor_elements = 1000;
  auto s = Session::load_from_bytes(m.bytes(), opts);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto ok = (*s)->run({{"shape", Tensor::from_vector<int64_t>({10, 10})}});
  EXPECT_TRUE(ok.ok()) << ok.status().to_string();
  auto r = (*s)->run({{"shape", Tensor::from_vector<int64_t>({100000, 100000})}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(r.status().message().find("ConstantOfShape"), std::string::npos) << r.status().message();
}

TEST(SessionTest, InitializerBackedInputsCanBeOverridden) {
  ModelBuilder m;
  m.input("x", kF, {2}).input("bias", kF, {2}).output("y");
  m.initializer("bias", {2}, {10.0f, 20.0f});
  m.node("Add", {"x", "bias"}, {"y"});
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->inputs().size(), 1u);
  auto d = (*s)->run({{"x", Tensor::from_vector<float>({1, 2})}});
  ASSERT_TRUE(d.ok());
  EXPECT_FLOAT_EQ((*d)[0].second.data<float>()[1], 22.0f);
  auto o = (*s)->run({{"x", Tensor::from_vector<float>({1, 2})}, {"bias", Tensor::from_vector<float>({0, 0})}});
  ASSERT_TRUE(o.ok());
  EXPECT_FLOAT_EQ((*o)[0].second.data<float>()[1], 2.0f);
}

// The main graph's initializers are read in place, not copied into each run's frame: a subgraph
// that captures one (a plain initializer, and one that backs a graph input) reads it on every
// run, and a fed value that overrides the input-backed one reaches the subgraph too.
TEST(SessionTest, SubgraphsReadMainGraphInitializersAndOverrides) {
  ModelBuilder m;
  m.input("x", kF, {3}).input("c", onnx::TensorProto::BOOL, {}).input("bias", kF, {3}).output("o");
  m.initializer("w", {3}, {10.0f, 20.0f, 30.0f});
  m.initializer("bias", {3}, {1.0f, 2.0f, 3.0f});
  auto& n = m.node("If", {"c"}, {"o"});
  auto& t = passes::testing::add_branch(n, "then_branch", "t");
  passes::testing::add_subgraph_node(t, "Mul", {"x", "w"}, {"xw"});
  passes::testing::add_subgraph_node(t, "Add", {"xw", "bias"}, {"t"});
  passes::testing::add_subgraph_node(passes::testing::add_branch(n, "else_branch", "e"), "Sub",
                                     {"w", "bias"}, {"e"});
  for (int level : {0, 2}) {
    SessionOptions opts;
    opts.optimization_level = level;
    auto s = Session::load_from_bytes(m.bytes(), opts);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    const Tensor x = Tensor::from_vector<float>({1, 2, 3});
    auto vals = [](const Tensor& t) {
      return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
    };
    for (int round = 0; round < 2; ++round) {  // a second run reads the same initializers
      SCOPED_TRACE("level " + std::to_string(level) + " round " + std::to_string(round));
      auto then_r = (*s)->run({{"x", x}, {"c", passes::testing::bool_scalar(true)}});
      ASSERT_TRUE(then_r.ok()) << then_r.status().to_string();
      EXPECT_EQ(vals((*then_r)[0].second), (std::vector<float>{11, 42, 93}));
      auto else_r = (*s)->run({{"x", x}, {"c", passes::testing::bool_scalar(false)}});
      ASSERT_TRUE(else_r.ok()) << else_r.status().to_string();
      EXPECT_EQ(vals((*else_r)[0].second), (std::vector<float>{9, 18, 27}));
      auto fed = (*s)->run({{"x", x},
                            {"c", passes::testing::bool_scalar(false)},
                            {"bias", Tensor::from_vector<float>({-1, -2, -3})}});
      ASSERT_TRUE(fed.ok()) << fed.status().to_string();
      EXPECT_EQ(vals((*fed)[0].second), (std::vector<float>{11, 22, 33}));
    }
  }
}

TEST(SessionTest, RejectsUnsupportedOpset) {
  ModelBuilder m(99);
  m.input("x", kF, {1}).output("y");
  m.node("Relu", {"x"}, {"y"});
  auto s = Session::load_from_bytes(m.bytes());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("opset 99"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("supported: 1-22"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("convert_version(model, 22)"), std::string::npos) << s.status().message();
  // The newest accepted opset loads and runs.
  ModelBuilder m22(22);
  m22.input("x", kF, {1}).output("y");
  m22.node("Relu", {"x"}, {"y"});
  EXPECT_TRUE(Session::load_from_bytes(m22.bytes()).ok());
}

TEST(SessionTest, ConcurrentRunsOnOneSessionAgree) {
  auto s = Session::load_from_bytes(mlp_model());
  ASSERT_TRUE(s.ok());
  const Session& sess = **s;
  std::vector<Tensor> expected;
  for (int b = 1; b <= 4; ++b) {
    auto r = sess.run({{"x", filled({b, 4}, -0.5f * b)}});
    ASSERT_TRUE(r.ok());
    expected.push_back((*r)[0].second);
  }
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const int b = 1 + (t + i) % 4;
        auto r = sess.run({{"x", filled({b, 4}, -0.5f * b)}});
        if (!r.ok()) {
          ++failures;
          continue;
        }
        const Tensor& y = (*r)[0].second;
        const Tensor& e = expected[static_cast<size_t>(b - 1)];
        if (y.shape() != e.shape() || std::memcmp(y.raw_data(), e.raw_data(), e.nbytes()) != 0) ++mismatches;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace osprey

namespace osprey {
namespace {

// A depthwise + pointwise conv pair: outputs with 1 and 2 threads must be identical.
TEST(SessionThreadsTest, ThreadCountDoesNotChangeResults) {
  ModelBuilder m;
  m.input("x", kF, {-1, 8, 20, 20}).output("y");
  std::vector<float> dw(8 * 9), pw(16 * 8);
  for (size_t i = 0; i < dw.size(); ++i) dw[i] = 0.05f * static_cast<float>(i % 11) - 0.2f;
  for (size_t i = 0; i < pw.size(); ++i) pw[i] = 0.03f * static_cast<float>(i % 13) - 0.15f;
  m.initializer("dw", {8, 1, 3, 3}, dw);
  m.initializer("pw", {16, 8, 1, 1}, pw);
  auto& c1 = m.node("Conv", {"x", "dw"}, {"h"});
  auto* g = c1.add_attribute();
  g->set_name("group");
  g->set_type(onnx::AttributeProto::INT);
  g->set_i(8);
  auto* p = c1.add_attribute();
  p->set_name("pads");
  p->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) p->add_ints(1);
  m.node("Conv", {"h", "pw"}, {"y"});
  SessionOptions one, two;
  one.threads = 1;
  two.threads = 2;
  auto s1 = Session::load_from_bytes(m.bytes(), one);
  auto s2 = Session::load_from_bytes(m.bytes(), two);
  ASSERT_TRUE(s1.ok() && s2.ok());
  EXPECT_EQ((*s1)->options().threads, 1);
  EXPECT_EQ((*s2)->options().threads, 2);
  for (int64_t batch : {1, 4}) {
    const Tensor x = filled({batch, 8, 20, 20}, -0.7f);
    auto r1 = (*s1)->run({{"x", x}});
    auto r2 = (*s2)->run({{"x", x}});
    ASSERT_TRUE(r1.ok() && r2.ok());
    const Tensor& a = (*r1)[0].second;
    const Tensor& b = (*r2)[0].second;
    ASSERT_EQ(a.shape(), (Shape{batch, 16, 20, 20}));
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()), 0);
  }
  SessionOptions bad;
  bad.threads = -1;
  EXPECT_EQ(Session::load_from_bytes(m.bytes(), bad).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey

namespace osprey {
namespace {

TEST(SessionGraphDumpTest, ShowsTheGraphAsItRuns) {
  SessionOptions level0;
  level0.optimization_level = 0;
  auto s0 = Session::load_from_bytes(mlp_model(), level0);
  ASSERT_TRUE(s0.ok());
  const std::string dump = (*s0)->graph_dump();
  for (const char* op : {"MatMul", "Add", "Relu"}) EXPECT_NE(dump.find(op), std::string::npos) << dump;
  EXPECT_NE(dump.find("x"), std::string::npos) << dump;
}

}  // namespace
}  // namespace osprey
