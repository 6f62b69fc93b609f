// Unit tests for the image, detection, signal, text and random reference kernels:
// opset differences, element types and bad inputs that the ONNX node cases do not cover.
#include <gtest/gtest.h>

#include <algorithm>
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

// The greedy selection written out plainly (a stable sort by descending score, then every
// candidate against every picked box), the oracle for the kernel's heap-ordered selection.
std::vector<int64_t> nms_oracle(const Tensor& boxes, const Tensor& scores, int64_t max_out, float iou, float th) {
  const int64_t classes = scores.dim(1), n = scores.dim(2);
  std::vector<int64_t> out;
  for (int64_t c = 0; c < classes; ++c) {
    std::vector<int64_t> order;
    for (int64_t i = 0; i < n; ++i)
      if (scores.data<float>()[c * n + i] > th) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return scores.data<float>()[c * n + a] > scores.data<float>()[c * n + b];
    });
    std::vector<int64_t> picked;
    for (int64_t i : order) {
      if (static_cast<int64_t>(picked.size()) >= max_out) break;
      const float* a = boxes.data<float>() + i * 4;
      bool keep = true;
      for (int64_t p : picked) {
        const float* b = boxes.data<float>() + p * 4;
        const float ix = std::max(std::min(a[3], b[3]) - std::max(a[1], b[1]), 0.0f);
        const float iy = std::max(std::min(a[2], b[2]) - std::max(a[0], b[0]), 0.0f);
        const float inter = ix * iy;
        const float uni = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
        if (inter > 0 && inter / uni > iou) keep = false;
      }
      if (!keep) continue;
      picked.push_back(i);
      out.insert(out.end(), {0, c, i});
    }
  }
  return out;
}

TEST(NonMaxSuppression, HeapOrderedSelectionMatchesAPlainGreedyOracle) {
  // Boxes as [y1, x1, y2, x2] with y1 < y2, x1 < x2 on a small grid (many overlaps); scores
  // on a coarse grid (many ties, broken by the lower index).
  const int64_t n = 300, classes = 3;
  Tensor boxes(DType::kFloat32, {1, n, 4}), scores(DType::kFloat32, {1, classes, n});
  uint32_t seed = 7;
  auto next = [&seed]() { return (seed = seed * 1664525u + 1013904223u) >> 8; };
  for (int64_t i = 0; i < n; ++i) {
    const float y = static_cast<float>(next() % 20), x = static_cast<float>(next() % 20);
    boxes.data<float>()[i * 4 + 0] = y;
    boxes.data<float>()[i * 4 + 1] = x;
    boxes.data<float>()[i * 4 + 2] = y + 1 + static_cast<float>(next() % 5);
    boxes.data<float>()[i * 4 + 3] = x + 1 + static_cast<float>(next() % 5);
  }
  for (int64_t i = 0; i < classes * n; ++i) scores.data<float>()[i] = static_cast<float>(next() % 16) / 16.0f;
  for (int64_t max_out : {1, 7, 50, 1000}) {
    for (float iou : {0.0f, 0.3f, 0.7f}) {
      SCOPED_TRACE("max_out " + std::to_string(max_out) + " iou " + std::to_string(iou));
      auto r = run_single("NonMaxSuppression", 11,
                          {boxes, scores, vec<int64_t>({max_out}), fvec({iou}), fvec({0.2f})});
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      const std::vector<int64_t> want = nms_oracle(boxes, scores, max_out, iou, 0.2f);
      ASSERT_EQ(r->numel(), static_cast<int64_t>(want.size()));
      EXPECT_TRUE(std::equal(want.begin(), want.end(), r->data<int64_t>()));
    }
  }
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
