// SessionOptions::precision: fast mode marks the convolutions and matrix products for bf16,
// leaves every other op alone, stays close to exact mode's outputs (but is not exact mode
// under another name), and is refused where it cannot be honoured.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "kernels/cpu/cpu_capabilities.h"
#include "model_builder.h"
#include "osprey/session.h"
#include "test_models.h"

namespace osprey::testing {
namespace {

std::vector<float> pattern(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i) + 0.1f);
  return v;
}

// x [1,8,6,6] -> Conv 3x3 (16) -> Relu -> GlobalAveragePool -> Flatten -> MatMul [16,10] -> Softmax
std::string conv_matmul_model() {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 8, 6, 6}).output("y");
  m.initializer("W", {16, 8, 3, 3}, pattern(16 * 8 * 9, 0.2f));
  m.initializer("B", {16, 10}, pattern(160, 0.5f));
  auto& c = m.node("Conv", {"x", "W"}, {"c"});
  auto* pads = c.add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  m.node("Relu", {"c"}, {"r"});
  m.node("GlobalAveragePool", {"r"}, {"p"});
  m.node("Flatten", {"p"}, {"f"});
  m.node("MatMul", {"f", "B"}, {"l"});
  m.node("Softmax", {"l"}, {"y"});
  return m.bytes();
}

Tensor input() {
  Tensor t(DType::kFloat32, {1, 8, 6, 6});
  const auto v = pattern(static_cast<size_t>(t.numel()), 1.0f);
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

TEST(SessionPrecision, NamesAndDefault) {
  EXPECT_EQ(SessionOptions{}.precision, Precision::kExact);
  EXPECT_STREQ(precision_name(Precision::kExact), "exact");
  EXPECT_STREQ(precision_name(Precision::kFast), "fast");
}

TEST(SessionPrecision, FastModeAtLevelZeroIsRefused) {
  SessionOptions o;
  o.optimization_level = 0;
  o.precision = Precision::kFast;
  auto s = Session::load_from_bytes(conv_matmul_model(), o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.status().message().find("optimization level >= 1"), std::string::npos)
      << s.status().to_string();
}

TEST(SessionPrecision, FastModeMarksProductsAndStaysClose) {
  SessionOptions exact_o, fast_o;
  fast_o.precision = Precision::kFast;
  auto fast = Session::load_from_bytes(conv_matmul_model(), fast_o);
  if (!cpu::bf16_compute_available()) {
    // Refused, with the reason, rather than run in float32 under the name "fast".
    ASSERT_FALSE(fast.ok());
    EXPECT_EQ(fast.status().code(), StatusCode::kFailedPrecondition);
    EXPECT_NE(fast.status().message().find("native bfloat16"), std::string::npos);
    GTEST_SKIP() << "no native bf16 on this CPU: checked that fast mode is refused";
  }
  ASSERT_TRUE(fast.ok()) << fast.status().to_string();
  auto exact = Session::load_from_bytes(conv_matmul_model(), exact_o);
  ASSERT_TRUE(exact.ok()) << exact.status().to_string();

  const std::string dump = (*fast)->graph_dump();
  EXPECT_EQ(count_occurrences(dump, "compute_precision=\"bf16\"") +
                count_occurrences(dump, "compute_precision=bf16"),
            2)
      << dump;
  EXPECT_EQ(count_occurrences((*exact)->graph_dump(), "compute_precision"), 0);
  EXPECT_EQ((*fast)->optimization_marks().bf16_nodes, 2);
  EXPECT_EQ((*exact)->optimization_marks().bf16_nodes, 0);

  auto yf = (*fast)->run({{"x", input()}});
  auto ye = (*exact)->run({{"x", input()}});
  ASSERT_TRUE(yf.ok()) << yf.status().to_string();
  ASSERT_TRUE(ye.ok()) << ye.status().to_string();
  const Tensor& a = (*yf)[0].second;
  const Tensor& b = (*ye)[0].second;
  ASSERT_EQ(a.shape(), b.shape());
  double dot = 0, na = 0, nb = 0, worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    dot += x * y;
    na += x * x;
    nb += y * y;
    worst = std::max(worst, std::fabs(x - y));
  }
  EXPECT_GE(dot / std::sqrt(na * nb), 0.999);
  EXPECT_LT(worst, 1e-2);
  EXPECT_GT(worst, 0.0) << "fast mode gave exactly the float32 result";
}

// x [1,C,12,12] -> Conv KxK (8, stride 2) -> Relu -> Conv 3x3 (8) -> y.
std::string stem_model(int64_t channels, int64_t k) {
  ModelBuilder m;
  m.input("x", onnx::TensorProto::FLOAT, {1, channels, 12, 12}).output("y");
  m.initializer("W1", {8, channels, k, k}, pattern(static_cast<size_t>(8 * channels * k * k), 0.2f));
  m.initializer("W2", {8, 8, 3, 3}, pattern(8 * 8 * 9, 0.3f));
  auto pads = [](onnx::NodeProto& n, int64_t p, int64_t stride) {
    auto* a = n.add_attribute();
    a->set_name("pads");
    a->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 4; ++i) a->add_ints(p);
    auto* s = n.add_attribute();
    s->set_name("strides");
    s->set_type(onnx::AttributeProto::INTS);
    for (int i = 0; i < 2; ++i) s->add_ints(stride);
  };
  pads(m.node("Conv", {"x", "W1"}, {"c1"}, "stem"), k / 2, 2);
  m.node("Relu", {"c1"}, {"r"});
  pads(m.node("Conv", {"r", "W2"}, {"y"}, "second"), 1, 1);
  return m.bytes();
}

TEST(SessionPrecision, SmallImageStemStaysFloat32) {
  // A convolution over the graph input with at most 4 channels and 9 taps keeps float32 in
  // fast mode (its X is the caller's image); a 7x7 one, or one over 8 channels, is marked.
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 on this CPU";
  SessionOptions o;
  o.precision = Precision::kFast;
  for (auto [channels, k, marked] : {std::tuple{3, 3, 1}, std::tuple{1, 1, 1}, std::tuple{3, 7, 2},
                                     std::tuple{8, 3, 2}}) {
    SCOPED_TRACE(str_cat(channels, " channels, ", k, "x", k));
    auto s = Session::load_from_bytes(stem_model(channels, k), o);
    ASSERT_TRUE(s.ok()) << s.status().to_string();
    EXPECT_EQ((*s)->optimization_marks().bf16_nodes, marked) << (*s)->graph_dump();
    Tensor x(DType::kFloat32, {1, channels, 12, 12});
    const auto v = pattern(static_cast<size_t>(x.numel()), 1.0f);
    std::copy(v.begin(), v.end(), x.data<float>());
    auto y = (*s)->run({{"x", x}});
    ASSERT_TRUE(y.ok()) << y.status().to_string();
  }
}

}  // namespace
}  // namespace osprey::testing
