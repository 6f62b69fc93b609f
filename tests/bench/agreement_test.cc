#include "core/agreement.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace osprey::bench {
namespace {

Tensor make(Shape shape, std::vector<float> v) {
  Tensor t(DType::kFloat32, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

TEST(BenchAgreement, IdenticalOutputsAgreeFully) {
  const Tensor a = make({2, 3}, {1, 5, 2, 9, 0, 3});
  const OutputAgreement r = compare_outputs("y", a, a);
  EXPECT_TRUE(r.compared);
  EXPECT_EQ(r.max_abs, 0);
  EXPECT_EQ(r.max_rel, 0);
  EXPECT_NEAR(r.cosine, 1, 1e-12);
  EXPECT_EQ(r.topk, 3);
  EXPECT_EQ(r.top1_agreement, 1);
  EXPECT_EQ(r.topk_overlap, 1);
}

TEST(BenchAgreement, ErrorsAndTopKOnDifferentOutputs) {
  const Tensor ref = make({2, 3}, {1, 5, 2, 9, 0, 3});
  const Tensor oth = make({2, 3}, {1, 5.5, 2, 0, 9, 3});  // row 1's argmax moves
  const OutputAgreement r = compare_outputs("y", ref, oth);
  ASSERT_TRUE(r.compared);
  EXPECT_DOUBLE_EQ(r.max_abs, 9);
  EXPECT_DOUBLE_EQ(r.max_rel, 9 / 1e-6);  // |9 - 0| / max(|0|, 1e-6)
  EXPECT_LT(r.cosine, 0.9);
  EXPECT_DOUBLE_EQ(r.top1_agreement, 0.5);
  EXPECT_DOUBLE_EQ(r.topk_overlap, 1.0);  // k = 3 = every class
}

TEST(BenchAgreement, RelativeErrorAndCosineOfVectors) {
  const OutputAgreement r = compare_outputs("v", make({3}, {2, -4, 8}), make({3}, {2.2, -4, 8}));
  EXPECT_NEAR(r.max_abs, 0.2, 1e-6);
  EXPECT_NEAR(r.max_rel, 0.1, 1e-6);
  EXPECT_EQ(r.topk, 0);  // rank 1: not class scores
  EXPECT_LT(r.top1_agreement, 0);
  EXPECT_GT(r.cosine, 0.999);
}

TEST(BenchAgreement, ShapeMismatchIsNotCompared) {
  const OutputAgreement r = compare_outputs("y", make({2}, {1, 2}), make({1, 2}, {1, 2}));
  EXPECT_FALSE(r.compared);
  EXPECT_NE(r.note.find("shape"), std::string::npos);
}

TEST(BenchAgreement, OneSidedNanIsInfiniteError) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const OutputAgreement r = compare_outputs("y", make({2}, {1, 2}), make({2}, {1, nan}));
  EXPECT_TRUE(std::isinf(r.max_abs));
  EXPECT_NE(r.note.find("NaN"), std::string::npos);
}

TEST(BenchAgreement, ZerosAndDtypes) {
  EXPECT_EQ(compare_outputs("z", make({2}, {0, 0}), make({2}, {0, 0})).cosine, 1);
  EXPECT_EQ(compare_outputs("z", make({2}, {0, 0}), make({2}, {0, 1})).cosine, 0);
  Tensor i64(DType::kInt64, {2});
  i64.data<int64_t>()[0] = 1;
  i64.data<int64_t>()[1] = 2;
  const OutputAgreement r = compare_outputs("i", make({2}, {1, 2}), i64);
  EXPECT_TRUE(r.compared);
  EXPECT_EQ(r.max_abs, 0);
  EXPECT_NE(r.note.find("dtype"), std::string::npos);
}

}  // namespace
}  // namespace osprey::bench
