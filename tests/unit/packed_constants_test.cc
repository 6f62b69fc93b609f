// Weights prepacked at load: the session frees the plain copy of a constant B when every reader
// holds it packed, keeps it when anything else can read it, and the products stay exact for
// any number of rows (including row counts whose primitive was not built at load).
#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include "kernels/cpu/conv_taps.h"
#include "model_builder.h"
#include "osprey/session.h"

namespace osprey::testing {
namespace {

constexpr int64_t kK = 5, kN = 7;
constexpr const char* kReleasedMark = "float32[5,7] (held packed by its readers)";

std::vector<float> pattern(size_t n, float scale, float phase) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + phase);
  return v;
}

const std::vector<float>& weights() {
  static const std::vector<float> w = pattern(kK * kN, 0.5f, 0.3f);
  return w;
}

Tensor rows(int64_t m) {
  Tensor t(DType::kFloat32, {m, kK});
  const auto v = pattern(static_cast<size_t>(t.numel()), 1.0f, 0.1f);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

// x [m,K] times w [K,N] (w_t: w given as [N,K]), in double.
std::vector<double> product(const Tensor& x, const std::vector<float>& w, bool w_t) {
  const int64_t m = x.dim(0);
  std::vector<double> y(static_cast<size_t>(m * kN), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < kN; ++j)
      for (int64_t k = 0; k < kK; ++k)
        y[static_cast<size_t>(i * kN + j)] +=
            double{x.data<float>()[i * kK + k]} * w[static_cast<size_t>(w_t ? j * kK + k : k * kN + j)];
  return y;
}

void expect_near(const Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.numel(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got.data<float>()[i], want[i], 1e-4) << "element " << i;
}

Tensor run_one(const Session& s, const Tensor& x, size_t output = 0) {
  auto out = s.run({{"x", x}});
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? (*out)[output].second : Tensor();
}

// Whole batches (not item by item), so that other batch sizes reach the kernels as new shapes.
SessionOptions whole_batches() {
  SessionOptions o;
  o.batch_split = BatchSplit::kOff;
  return o;
}

std::unique_ptr<Session> load(const std::string& bytes) {
  auto s = Session::load_from_bytes(bytes, whole_batches());
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? std::move(*s) : nullptr;
}

// y = x [N,K] · W [K,N], W a constant that only the MatMul reads.
std::string matmul_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).output("y");
  m.initializer("W", {kK, kN}, weights());
  m.node("MatMul", {"x", "W"}, {"y"});
  return m.bytes();
}

TEST(PackedConstants, MatMulWeightsAreReleasedAndEveryRowCountAgrees) {
  auto s = load(matmul_model());
  ASSERT_TRUE(s);
  EXPECT_NE(s->graph_dump().find(kReleasedMark), std::string::npos) << s->graph_dump();
  for (int64_t rows_n : {1, 3, 128, 130, 1})  // 128 is the row count packed at load
    expect_near(run_one(*s, rows(rows_n)), product(rows(rows_n), weights(), false));
}

TEST(PackedConstants, GemmTransposedAndFusedBiasAreReleased) {
  {
    ModelBuilder m;
    m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).output("y");
    m.initializer("Wt", {kN, kK}, weights());
    auto& g = m.node("Gemm", {"x", "Wt"}, {"y"});
    auto* a = g.add_attribute();
    a->set_name("transB");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(1);
    auto s = load(m.bytes());
    ASSERT_TRUE(s);
    EXPECT_NE(s->graph_dump().find("float32[7,5] (held packed by its readers)"), std::string::npos)
        << s->graph_dump();
    for (int64_t rows_n : {2, 9}) expect_near(run_one(*s, rows(rows_n)), product(rows(rows_n), weights(), true));
  }
  {
    ModelBuilder m;  // MatMul + Add(bias) becomes one FusedMatMul
    m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).output("y");
    m.initializer("W", {kK, kN}, weights());
    m.initializer("b", {kN}, pattern(kN, 1.0f, 0.7f));
    m.node("MatMul", {"x", "W"}, {"p"});
    m.node("Add", {"p", "b"}, {"y"});
    auto s = load(m.bytes());
    ASSERT_TRUE(s);
    EXPECT_NE(s->graph_dump().find("FusedMatMul"), std::string::npos) << s->graph_dump();
    EXPECT_NE(s->graph_dump().find(kReleasedMark), std::string::npos) << s->graph_dump();
    auto want = product(rows(4), weights(), false);
    const auto b = pattern(kN, 1.0f, 0.7f);
    for (size_t i = 0; i < want.size(); ++i) want[i] += b[i % kN];
    expect_near(run_one(*s, rows(4)), want);
  }
}

TEST(PackedConstants, AnotherReaderKeepsThePlainWeights) {
  ModelBuilder m;  // W also feeds an Add with a run-time input: the plain tensor must stay
  m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).input("c", onnx::TensorProto::FLOAT, {1});
  m.output("y").output("z");
  m.initializer("W", {kK, kN}, weights());
  m.node("MatMul", {"x", "W"}, {"y"});
  m.node("Add", {"W", "c"}, {"z"});
  auto s = load(m.bytes());
  ASSERT_TRUE(s);
  EXPECT_EQ(s->graph_dump().find("held packed"), std::string::npos) << s->graph_dump();
  Tensor c(DType::kFloat32, {1});
  c.data<float>()[0] = 1.5f;
  auto out = s->run({{"x", rows(3)}, {"c", c}});
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  expect_near((*out)[0].second, product(rows(3), weights(), false));
  const Tensor& z = (*out)[1].second;
  ASSERT_EQ(z.numel(), kK * kN);
  for (int64_t i = 0; i < z.numel(); ++i) EXPECT_FLOAT_EQ(z.data<float>()[i], weights()[i] + 1.5f);
}

TEST(PackedConstants, OverridableAndOutputConstantsAreKept) {
  {
    ModelBuilder m;  // W is also a graph input: a caller may feed another one
    m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).input("W", onnx::TensorProto::FLOAT, {kK, kN});
    m.output("y");
    m.initializer("W", {kK, kN}, weights());
    m.node("MatMul", {"x", "W"}, {"y"});
    auto s = load(m.bytes());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->graph_dump().find("held packed"), std::string::npos) << s->graph_dump();
    expect_near(run_one(*s, rows(2)), product(rows(2), weights(), false));
    const auto other = pattern(kK * kN, 2.0f, 1.1f);
    Tensor w(DType::kFloat32, {kK, kN});
    std::copy(other.begin(), other.end(), w.data<float>());
    auto out = s->run({{"x", rows(2)}, {"W", w}});
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    expect_near((*out)[0].second, product(rows(2), other, false));
  }
  {
    ModelBuilder m;  // W is also a graph output
    m.input("x", onnx::TensorProto::FLOAT, {-1, kK}).output("y").output("W");
    m.initializer("W", {kK, kN}, weights());
    m.node("MatMul", {"x", "W"}, {"y"});
    auto s = load(m.bytes());
    ASSERT_TRUE(s);
    const Tensor w = run_one(*s, rows(2), 1);
    ASSERT_EQ(w.numel(), kK * kN);
    ASSERT_NE(w.raw_data(), nullptr);
    for (int64_t i = 0; i < w.numel(); ++i) EXPECT_FLOAT_EQ(w.data<float>()[i], weights()[i]);
  }
}

TEST(PackedConstants, ConcurrentRunsOnReleasedWeightsAgree) {
  auto s = load(matmul_model());
  ASSERT_TRUE(s);
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const int64_t n = 1 + (t * 7 + i) % 40;  // new row counts build primitives concurrently
        auto out = s->run({{"x", rows(n)}});
        if (!out.ok()) {
          failures[static_cast<size_t>(t)]++;
          continue;
        }
        const auto want = product(rows(n), weights(), false);
        for (size_t k = 0; k < want.size(); ++k)
          if (std::fabs((*out)[0].second.data<float>()[k] - want[k]) > 1e-4) {
            failures[static_cast<size_t>(t)]++;
            break;
          }
      }
    });
  for (auto& th : threads) th.join();
  for (int f : failures) EXPECT_EQ(f, 0);
}

onnx::AttributeProto* ints_attr(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
  return a;
}

TEST(PackedConstants, ConvWeightsArePackedFromInferredShapesAndReleased) {
  // x [N,4,9,9] -> Conv 3x3 (8) -> Relu -> MaxPool 3x3/2 -> Conv 1x1 (6) -> y: the second
  // convolution's input shape is known only through the pool (channels-last after the passes).
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 4, 9, 9}).output("y");
  m.initializer("W1", {8, 4, 3, 3}, pattern(8 * 4 * 9, 0.3f, 0.2f));
  m.initializer("W2", {6, 8, 1, 1}, pattern(6 * 8, 0.4f, 0.9f));
  ints_attr(m.node("Conv", {"x", "W1"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"});
  auto& pool = m.node("MaxPool", {"r"}, {"p"});
  ints_attr(pool, "kernel_shape", {3, 3});
  ints_attr(pool, "strides", {2, 2});
  m.node("Conv", {"p", "W2"}, {"y"});
  auto fast = load(m.bytes());
  ASSERT_TRUE(fast);
  const std::string dump = fast->graph_dump();
  EXPECT_NE(dump.find("float32[8,4,3,3] (held packed by its readers)"), std::string::npos) << dump;
  EXPECT_NE(dump.find("float32[6,8,1,1] (held packed by its readers)"), std::string::npos) << dump;
  SessionOptions plain;
  plain.optimization_level = 0;  // reference kernels, weights as given
  auto ref = Session::load_from_bytes(m.bytes(), plain);
  ASSERT_TRUE(ref.ok()) << ref.status().to_string();
  for (int64_t batch : {1, 3, 1}) {  // batch 1 was packed at load; 3 is a new primitive
    Tensor x(DType::kFloat32, {batch, 4, 9, 9});
    const auto v = pattern(static_cast<size_t>(x.numel()), 1.0f, 0.5f);
    std::copy(v.begin(), v.end(), x.data<float>());
    auto got = fast->run({{"x", x}});
    auto want = (*ref)->run({{"x", x}});
    ASSERT_TRUE(got.ok() && want.ok());
    const Tensor &g = (*got)[0].second, &w = (*want)[0].second;
    ASSERT_EQ(g.shape(), w.shape());
    for (int64_t i = 0; i < g.numel(); ++i)
      ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-4) << "batch " << batch << " element " << i;
  }
}

TEST(PackedConstants, ConvWeightsInTheTapFormAreReleasedAndNewShapesAgree) {
  // A 3x3 convolution in the tap form (one packed 1x1 product per kernel row): its plain weights
  // are released at load, and batches not seen at load run from the packed rows.
  const cpu::TapPolicyScope always(cpu::TapPolicy::kAlways);
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {-1, 8, 6, 6}).output("y");
  m.initializer("W", {12, 8, 3, 3}, pattern(12 * 8 * 9, 0.3f, 0.7f));
  m.initializer("B", {12}, pattern(12, 0.2f, 0.1f));
  ints_attr(m.node("Conv", {"x", "W", "B"}, {"c"}), "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"y"});
  auto fast = Session::load_from_bytes(m.bytes(), whole_batches());
  SessionOptions plain;
  plain.optimization_level = 0;
  auto ref = Session::load_from_bytes(m.bytes(), plain);
  ASSERT_TRUE(fast.ok() && ref.ok());
  const int64_t before = cpu::tap_convolutions_run();
  for (const Shape& s : std::vector<Shape>{{1, 8, 6, 6}, {1, 8, 6, 6}, {3, 8, 6, 6}, {2, 8, 6, 6}}) {
    Tensor x(DType::kFloat32, s);
    const auto v = pattern(static_cast<size_t>(x.numel()), 1.0f, 0.4f);
    std::copy(v.begin(), v.end(), x.data<float>());
    auto got = (*fast)->run({{"x", x}});
    auto want = (*ref)->run({{"x", x}});
    ASSERT_TRUE(got.ok() && want.ok()) << got.status().to_string();
    const Tensor &g = (*got)[0].second, &w = (*want)[0].second;
    ASSERT_EQ(g.shape(), w.shape());
    for (int64_t i = 0; i < g.numel(); ++i)
      ASSERT_NEAR(g.data<float>()[i], w.data<float>()[i], 1e-4) << shape_to_string(s) << " element " << i;
  }
  EXPECT_EQ(cpu::tap_convolutions_run(), before + 4);
  const std::string dump = (*fast)->graph_dump();
  EXPECT_NE(dump.find("float32[12,8,3,3] (held packed by its readers)"), std::string::npos) << dump;
}

}  // namespace
}  // namespace osprey::testing
