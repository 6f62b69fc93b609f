// Unit tests for the element-wise reference kernels: edge cases the ONNX node cases do not
// cover (integer corner cases, legacy broadcasting, string casts, bad inputs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace osprey {
namespace {

using namespace osprey::testing;

TEST(Elementwise, IntegerDivisionTruncatesAndNeverTraps) {
  const int32_t kMin = std::numeric_limits<int32_t>::min();
  auto r = run_single("Div", 14, {vec<int32_t>({7, -7, 5, kMin}), vec<int32_t>({2, 2, 0, -1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>(*r), (std::vector<int32_t>{3, -3, 0, kMin}));
}

TEST(Elementwise, ModFollowsDivisorOrDividendSign) {
  auto a = vec<int32_t>({-7, 7, -7, 5, 6});
  auto b = vec<int32_t>({3, -3, -3, 0, -1});
  auto r0 = run_single("Mod", 13, {a, b});
  ASSERT_TRUE(r0.ok()) << r0.status().to_string();
  EXPECT_EQ(values<int32_t>(*r0), (std::vector<int32_t>{2, -2, -1, 0, 0}));
  auto r1 = run_single("Mod", 13, {a, b}, {{"fmod", int_attr(1)}});
  ASSERT_TRUE(r1.ok()) << r1.status().to_string();
  EXPECT_EQ(values<int32_t>(*r1), (std::vector<int32_t>{-1, 1, -1, 0, 0}));
  EXPECT_FALSE(run_single("Mod", 13, {a, b}, {{"fmod", int_attr(2)}}).ok());
}

TEST(Elementwise, RoundHalfToEven) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r =
      run_single("Round", 11, {vec<float>({0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 2.4f, -2.6f, nan})});
  ASSERT_TRUE(r.ok());
  auto v = values<float>(*r);
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_EQ(v[1], 2.0f);
  EXPECT_EQ(v[2], 2.0f);
  EXPECT_EQ(v[3], 0.0f);
  EXPECT_EQ(v[4], -2.0f);
  EXPECT_EQ(v[5], 2.0f);
  EXPECT_EQ(v[6], -3.0f);
  EXPECT_TRUE(std::isnan(v[7]));
}

TEST(Elementwise, PowMixedTypes) {
  auto r = run_single("Pow", 15, {vec<int64_t>({2, 2, -1, 3}), vec<int64_t>({10, -1, -3, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{1024, 0, -1, 1}));
  auto f = run_single("Pow", 15, {vec<float>({2.0f, 9.0f}), vec<uint8_t>({3, 0})});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_EQ(values<float>(*f), (std::vector<float>{8.0f, 1.0f}));
  auto i = run_single("Pow", 15, {vec<int32_t>({2, 4}), vec<float>({0.5f, 0.5f})});
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  EXPECT_EQ(values<int32_t>(*i), (std::vector<int32_t>{1, 2}));
  // Before opset 12 both inputs must have the same type.
  EXPECT_FALSE(run_single("Pow", 7, {vec<float>({2.0f}), vec<double>({3.0})}).ok());
  // Squares (taken as x * x): the same bits as the float square of a double, signs, inf, NaN.
  const std::vector<float> xs = {1.1f, -3.7f, 1e-20f, 3e19f, -0.0f, INFINITY, NAN};
  auto sq = run_single("Pow", 15, {vec<float>(xs), vec<float>(std::vector<float>(xs.size(), 2.0f))});
  ASSERT_TRUE(sq.ok()) << sq.status().to_string();
  const std::vector<float> got = values<float>(*sq);
  for (size_t k = 0; k + 1 < xs.size(); ++k)
    EXPECT_EQ(got[k], static_cast<float>(static_cast<double>(xs[k]) * xs[k])) << xs[k];
  EXPECT_TRUE(std::isnan(got.back()));
  EXPECT_EQ(got[3], INFINITY);  // 9e38 overflows float
}

TEST(Elementwise, BitShiftPastWidthIsZero) {
  auto l = run_single("BitShift", 11, {vec<uint8_t>({1, 3, 255}), vec<uint8_t>({9, 2, 1})},
                      {{"direction", string_attr("LEFT")}});
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  EXPECT_EQ(values<uint8_t>(*l), (std::vector<uint8_t>{0, 12, 254}));
  auto r = run_single("BitShift", 11, {vec<uint64_t>({~0ull, 8}), vec<uint64_t>({64, 3})},
                      {{"direction", string_attr("RIGHT")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<uint64_t>(*r), (std::vector<uint64_t>{0, 1}));
  EXPECT_FALSE(run_single("BitShift", 11, {vec<uint8_t>({1}), vec<uint8_t>({1})}).ok());
}

TEST(Elementwise, LegacyBroadcastWithAxis) {
  std::vector<float> a(24, 1.0f);
  auto r = run_single("Add", 6, {vec<float>(a, {2, 3, 4}), vec<float>({10, 20, 30})},
                      {{"broadcast", int_attr(1)}, {"axis", int_attr(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->shape(), (Shape{2, 3, 4}));
  EXPECT_EQ(r->data<float>()[0], 11.0f);
  EXPECT_EQ(r->data<float>()[4], 21.0f);
  EXPECT_EQ(r->data<float>()[23], 31.0f);
  // Without broadcast=1, shapes must match exactly.
  EXPECT_FALSE(run_single("Add", 6, {vec<float>(a, {2, 3, 4}), vec<float>({1, 2, 3, 4})}).ok());
}

TEST(Elementwise, BroadcastMismatchIsAnError) {
  auto r = run_single("Mul", 14, {vec<float>({1, 2, 3}), vec<float>({1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(run_single("Add", 14, {vec<float>({1}), vec<double>({1})}).ok());
  EXPECT_FALSE(run_single("Add", 14, {vec<float>({1})}).ok());
}

TEST(Elementwise, BroadcastRowsAndColumns) {
  auto r = run_single("Sub", 14, {vec<int64_t>({1, 2, 3}, {3, 1}), vec<int64_t>({10, 20}, {1, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{-9, -19, -8, -18, -7, -17}));
}

TEST(Elementwise, CastStrings) {
  auto f = run_single("Cast", 13, {vec<std::string>({"1.5", "-INF", "nan", "1e3", "+2", " 7 "})},
                      {{"to", int_attr(1)}});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto v = values<float>(*f);
  EXPECT_EQ(v[0], 1.5f);
  EXPECT_EQ(v[1], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 1000.0f);
  EXPECT_EQ(v[4], 2.0f);
  EXPECT_EQ(v[5], 7.0f);
  auto i = run_single("Cast", 13, {vec<std::string>({"100.5", "-12", "9223372036854775807"})},
                      {{"to", int_attr(7)}});
  ASSERT_TRUE(i.ok()) << i.status().to_string();
  EXPECT_EQ(values<int64_t>(*i),
            (std::vector<int64_t>{100, -12, std::numeric_limits<int64_t>::max()}));
  EXPECT_FALSE(run_single("Cast", 13, {vec<std::string>({"abc"})}, {{"to", int_attr(1)}}).ok());
  auto s = run_single(
      "Cast", 13,
      {vec<float>({0.5f, 100.0f, 1e-5f, std::numeric_limits<float>::quiet_NaN(), -2.25f})},
      {{"to", int_attr(8)}});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(values<std::string>(*s),
            (std::vector<std::string>{"0.5", "100.0", "1e-05", "NaN", "-2.25"}));
}

TEST(Elementwise, CastHalfAndBoolToString) {
  auto h = run_single(
      "Cast", 13,
      {Tensor::from_vector<Float16>({Float16(0.1f), Float16(65504.0f), Float16(-1e-5f)})},
      {{"to", int_attr(8)}});
  ASSERT_TRUE(h.ok()) << h.status().to_string();
  EXPECT_EQ(values<std::string>(*h), (std::vector<std::string>{"0.1", "65500.0", "-1e-05"}));
  auto b = run_single("Cast", 13, {vec<bool>({true, false})}, {{"to", int_attr(8)}});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(values<std::string>(*b), (std::vector<std::string>{"True", "False"}));
  auto back = run_single("Cast", 13, {*b}, {{"to", int_attr(9)}});
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(values<bool>(*back), (std::vector<bool>{true, false}));
}

TEST(Elementwise, CastFloatToIntHasNoUndefinedBehaviour) {
  auto r = run_single("Cast", 13,
                      {vec<float>({std::numeric_limits<float>::quiet_NaN(), 300.0f, -1.9f, 1e30f})},
                      {{"to", int_attr(3)}});  // int8
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto v = values<int8_t>(*r);
  EXPECT_EQ(v[0], 0);
  EXPECT_EQ(v[1], 44);  // wraps modulo 256, as numpy does
  EXPECT_EQ(v[2], -1);
}

TEST(Elementwise, CastLegacyStringTo) {
  auto r = run_single("Cast", 1, {vec<int32_t>({1, 0, -3})}, {{"to", string_attr("BOOL")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(*r), (std::vector<bool>{true, false, true}));
  EXPECT_FALSE(run_single("Cast", 13, {vec<int32_t>({1})}, {{"to", int_attr(99)}}).ok());
  EXPECT_FALSE(run_single("Cast", 13, {vec<int32_t>({1})}).ok());
}

TEST(Elementwise, ClipBoundsAsInputs) {
  auto r = run_single("Clip", 13, {vec<int32_t>({-5, 0, 5}), Tensor::scalar<int32_t>(-1)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>(*r), (std::vector<int32_t>{-1, 0, 5}));
  // min > max gives max everywhere.
  auto m = run_single("Clip", 13,
                      {vec<float>({-5, 0, 5}), Tensor::scalar<float>(2), Tensor::scalar<float>(1)});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(values<float>(*m), (std::vector<float>{1, 1, 1}));
  EXPECT_FALSE(run_single("Clip", 13, {vec<float>({1}), vec<float>({0, 1})}).ok());
}

TEST(Elementwise, WhereBroadcastsThreeWays) {
  auto r = run_single("Where", 16,
                      {vec<bool>({true, false}, {1, 2}), vec<int64_t>({1, 2, 3}, {3, 1}),
                       Tensor::scalar<int64_t>(0)});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ(r->shape(), (Shape{3, 2}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{1, 0, 2, 0, 3, 0}));
}

TEST(Elementwise, VariadicMaxPropagatesNaNAndMeanBroadcasts) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto r =
      run_single("Max", 13, {vec<float>({1, nan, 3}), vec<float>({2, 0, nan}), vec<float>({0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  auto v = values<float>(*r);
  EXPECT_EQ(v[0], 2.0f);
  EXPECT_TRUE(std::isnan(v[1]));
  EXPECT_TRUE(std::isnan(v[2]));
  auto m = run_single("Mean", 13, {vec<float>({1, 2}, {2, 1}), vec<float>({3, 5, 7}, {1, 3})});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(values<float>(*m), (std::vector<float>{2, 3, 4, 2.5f, 3.5f, 4.5f}));
}

TEST(Elementwise, AbsAndNegWrapAtIntMin) {
  auto a = run_single("Abs", 13, {vec<int8_t>({-128, -3, 4})});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(values<int8_t>(*a), (std::vector<int8_t>{-128, 3, 4}));
  auto n = run_single("Neg", 13, {vec<int64_t>({std::numeric_limits<int64_t>::min(), 5})});
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(values<int64_t>(*n), (std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -5}));
}

TEST(Elementwise, PReluRejectsNonUnidirectionalSlope) {
  auto r = run_single("PRelu", 16, {vec<float>({-1, 2}), vec<float>({0.5f, 0.5f, 0.5f}, {3, 1})});
  EXPECT_FALSE(r.ok());
  auto ok = run_single("PRelu", 16, {vec<float>({-2, 2}), Tensor::scalar<float>(0.25f)});
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  EXPECT_EQ(values<float>(*ok), (std::vector<float>{-0.5f, 2.0f}));
}

TEST(Elementwise, Float16Arithmetic) {
  auto r = run_single("Add", 14,
                      {Tensor::from_vector<Float16>({Float16(1.5f), Float16(-2.0f)}),
                       Tensor::scalar<Float16>(Float16(0.25f))});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(static_cast<float>(r->data<Float16>()[0]), 1.75f);
  EXPECT_EQ(static_cast<float>(r->data<Float16>()[1]), -1.75f);
}

}  // namespace
}  // namespace osprey
