// Unit tests for the image, detection, signal, text and random reference kernels:
// opset differences, element types and bad inputs that the ONNX node cases do not cover.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace osprey {
namespace {

using namespace osprey::testing;

TEST(Resize, Opset10NearestRepeats) {
  auto r = run_single("Resize", 10, {fvec({1, 2, 3, 4}, {1, 1, 2, 2}), fvec({1, 1, 2, 2})},
                      {{"mode", string_attr("nearest")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{1, 1, 4, 4}));
  expect_near(*r, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

TEST(Upsample, Opset7LinearIsAsymmetric) {
  auto r = run_single("Upsample", 7, {fvec({1, 3}, {1, 1, 1, 2})},
                      {{"mode", string_attr("linear")}, {"scales", floats_attr({1, 1, 1, 2})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {1, 2, 3, 3});
}

TEST(Resize, LinearOnUint8Rounds) {
  auto r = run_single("Resize", 13, {vec<uint8_t>({0, 255}, {1, 2}), Tensor(), fvec({1, 2})},
                      {{"mode", string_attr("linear")},
                       {"coordinate_transformation_mode", string_attr("align_corners")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // Positions 0, 1/3, 2/3, 1 of the way from 0 to 255.
  EXPECT_EQ(values<uint8_t>(*r), (std::vector<uint8_t>{0, 85, 170, 255}));
}

TEST(Resize, NearestGathersStrings) {
  auto r = run_single("Resize", 13,
                      {vec<std::string>({"a", "b"}), Tensor(), Tensor(), vec<int64_t>({4})},
                      {{"mode", string_attr("nearest")},
                       {"coordinate_transformation_mode", string_attr("asymmetric")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"a", "a", "b", "b"}));
}

TEST(Resize, CubicOnIdentityIsExact) {
  auto r = run_single("Resize", 13, {fvec({1, 5, 2, 7}, {2, 2}), Tensor(), fvec({1, 1})},
                      {{"mode", string_attr("cubic")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {1, 5, 2, 7}, 0);
}

TEST(Resize, RejectsBadScalesAndSizes) {
  const Tensor x = fvec({1, 2, 3, 4}, {1, 1, 2, 2});
  expect_invalid(
      run_single("Resize", 13, {x, Tensor(), fvec({1, 1, 2, 2}), vec<int64_t>({1, 1, 4, 4})}),
      "exactly one");
  expect_invalid(run_single("Resize", 13, {x, Tensor(), fvec({2, 2})}), "one value per input axis");
  expect_invalid(run_single("Resize", 13, {x, Tensor(), fvec({1, 1, -2, 2})}), "must be positive");
  expect_invalid(run_single("Resize", 13, {x, Tensor(), Tensor(), vec<int64_t>({1, 1, -1, 4})}),
                 "negative");
  expect_invalid(run_single("Resize", 13, {x, Tensor(), fvec({1, 1, 2, 2})},
                            {{"coordinate_transformation_mode", string_attr("corners")}}),
                 "coordinate_transformation_mode");
  expect_invalid(
      run_single("Resize", 13, {x, fvec({0, 0}), fvec({1, 1, 2, 2})},
                 {{"coordinate_transformation_mode", string_attr("tf_crop_and_resize")}}),
      "roi");
  expect_invalid(
      run_single("Resize", 13, {x, Tensor(), fvec({1, 1, 2, 2})}, {{"mode", string_attr("area")}}),
      "mode");
}

TEST(GridSample, RejectsBadGrid) {
  expect_invalid(run_single("GridSample", 16,
                            {fvec({1, 2, 3, 4}, {1, 1, 2, 2}), fvec({0, 0, 0}, {1, 1, 1, 3})}),
                 "grid must have shape");
}

TEST(GridSample, BorderClampsFarPoints) {
  auto r = run_single("GridSample", 16,
                      {fvec({1, 2, 3, 4}, {1, 1, 2, 2}), fvec({-50, -50, 50, 50}, {1, 1, 2, 2})},
                      {{"padding_mode", string_attr("border")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {1, 4});
}

TEST(RoiAlign, RejectsBadBatchIndex) {
  expect_invalid(
      run_single("RoiAlign", 16,
                 {fvec({1, 2, 3, 4}, {1, 1, 2, 2}), fvec({0, 0, 1, 1}, {1, 4}), vec<int64_t>({3})}),
      "batch_indices[0]");
}

TEST(NonMaxSuppression, RejectsBadInputs) {
  const Tensor boxes = fvec({0, 0, 1, 1}, {1, 1, 4});
  expect_invalid(run_single("NonMaxSuppression", 11,
                            {boxes, fvec({0.5f}, {1, 1, 1}), vec<int64_t>({1}), fvec({1.5f})}),
                 "iou_threshold");
  expect_invalid(run_single("NonMaxSuppression", 11, {boxes, fvec({0.5f, 0.2f}, {1, 1, 2})}),
                 "does not match");
}

TEST(NonMaxSuppression, DefaultMaxOutputSelectsNothing) {
  auto r =
      run_single("NonMaxSuppression", 11, {fvec({0, 0, 1, 1}, {1, 1, 4}), fvec({0.5f}, {1, 1, 1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{0, 3}));
}

TEST(Dft, NonPowerOfTwoAndInverseRoundTrip) {
  auto r = run_single("DFT", 17, {fvec({1, 2, 3}, {1, 3, 1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const float s = std::sqrt(3.0f) / 2;
  expect_near(*r, {6, 0, -1.5f, s, -1.5f, -s});
  auto back = run_single("DFT", 17, {*r}, {{"inverse", int_attr(1)}});
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  expect_near(*back, {1, 0, 2, 0, 3, 0});
  expect_invalid(run_single("DFT", 17, {fvec({1, 2, 3}, {1, 3, 1})}, {{"axis", int_attr(2)}}),
                 "axis");
  expect_invalid(run_single("DFT", 17, {fvec({1, 2, 3}, {1, 1, 3})}), "last dimension");
}

TEST(Windows, SymmetricLengthOneIsOne) {
  auto r = run_single("HannWindow", 17, {Tensor::scalar<int64_t>(1)}, {{"periodic", int_attr(0)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {1});
  expect_invalid(run_single("HannWindow", 17, {Tensor::scalar<int64_t>(-3)}), "non-negative");
  expect_invalid(run_single("HannWindow", 17, {Tensor::scalar<int64_t>(3)},
                            {{"output_datatype", int_attr(8)}}),
                 "output_datatype");
}

TEST(StringNormalizer, LowerWithoutStopwords) {
  auto r = run_single(
      "StringNormalizer", 10, {vec<std::string>({"Ab", "cD"})},
      {{"case_change_action", string_attr("LOWER")}, {"stopwords", strings_attr({"AB"})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"cd"}));
}

TEST(TfIdfVectorizer, RejectsInconsistentPool) {
  expect_invalid(run_single("TfIdfVectorizer", 9, {vec<int64_t>({1, 2})},
                            {{"mode", string_attr("TF")},
                             {"min_gram_length", int_attr(1)},
                             {"max_gram_length", int_attr(2)},
                             {"ngram_counts", ints_attr({0, 1})},
                             {"ngram_indexes", ints_attr({0, 1})},
                             {"pool_int64s", ints_attr({1, 2})}}),
                 "whole 2-grams");
}

TEST(TfIdfVectorizer, IdfWeights) {
  auto r = run_single("TfIdfVectorizer", 9, {vec<int64_t>({1, 1, 2})},
                      {{"mode", string_attr("TFIDF")},
                       {"min_gram_length", int_attr(1)},
                       {"max_gram_length", int_attr(1)},
                       {"ngram_counts", ints_attr({0})},
                       {"ngram_indexes", ints_attr({1, 0})},
                       {"pool_int64s", ints_attr({1, 2})},
                       {"weights", floats_attr({0.5f, 3})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near(*r, {3, 1});
}

TEST(Random, SeedIsDeterministicAndInRange) {
  const Attrs a = {{"shape", ints_attr({2, 50})},
                   {"seed", float_attr(7)},
                   {"low", float_attr(-2)},
                   {"high", float_attr(3)}};
  auto r1 = run_single("RandomUniform", 1, {}, a);
  auto r2 = run_single("RandomUniform", 1, {}, a);
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(values<float>(*r1), values<float>(*r2));
  for (float v : values<float>(*r1)) {
    EXPECT_GE(v, -2);
    EXPECT_LT(v, 3);
  }
  auto m = run_single("Multinomial", 7, {fvec({0, -1e9f}, {1, 2})},
                      {{"sample_size", int_attr(5)}, {"seed", float_attr(1)}});
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ(values<int32_t>(*m), (std::vector<int32_t>(5, 0)));
  expect_invalid(run_single("Bernoulli", 15, {fvec({0.5f, 2})}), "probability");
}

}  // namespace
}  // namespace osprey
