// Unit tests for the reduction-family reference kernels (reductions, softmax, scans,
// normalizations, losses, linear algebra): opset differences and bad inputs that the ONNX
// node cases do not cover.
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

TEST(Reduce, AxesAttributeBeforeOpset13AndInputAfter) {
  Tensor x = fvec({1, 2, 3, 4, 5, 6}, {2, 3});
  auto a = run_single("ReduceSum", 11, {x}, {{"axes", ints_attr({1})}, {"keepdims", int_attr(0)}});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(a->shape(), (Shape{2}));
  expect_near(*a, {6, 15});
  auto b = run_single("ReduceSum", 13, {x, vec<int64_t>({-2})});
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  EXPECT_EQ(b->shape(), (Shape{1, 3}));
  expect_near(*b, {5, 7, 9});
  // No axes: reduce all, unless noop_with_empty_axes.
  auto c = run_single("ReduceSum", 13, {x, Tensor()});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->shape(), (Shape{1, 1}));
  expect_near(*c, {21});
  auto d =
      run_single("ReduceSum", 13, {x, vec<int64_t>({})}, {{"noop_with_empty_axes", int_attr(1)}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->shape(), (Shape{2, 3}));
}

TEST(Reduce, EmptyReductionsAndIntegers) {
  Tensor empty = fvec({}, {2, 0});
  auto s = run_single("ReduceSum", 13, {empty, vec<int64_t>({1})});
  ASSERT_TRUE(s.ok());
  expect_near(*s, {0, 0});
  auto p = run_single("ReduceProd", 13, {empty}, {{"axes", ints_attr({1})}});
  ASSERT_TRUE(p.ok());
  expect_near(*p, {1, 1});
  auto m = run_single("ReduceMax", 13, {empty}, {{"axes", ints_attr({1})}});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(std::isinf(m->data<float>()[0]) && m->data<float>()[0] < 0);
  auto mi = run_single("ReduceMean", 13, {vec<int32_t>({1, 2, 4})});
  ASSERT_TRUE(mi.ok());
  EXPECT_EQ(values<int32_t>(*mi), (std::vector<int32_t>{2}));
  auto l1 = run_single("ReduceL1", 13, {vec<int64_t>({-3, 4})});
  ASSERT_TRUE(l1.ok());
  EXPECT_EQ(values<int64_t>(*l1), (std::vector<int64_t>{7}));
}

TEST(Reduce, LogSumExpIsStableAndMaxPropagatesNaN) {
  auto r = run_single("ReduceLogSumExp", 13, {fvec({1000, 1000})});
  ASSERT_TRUE(r.ok());
  expect_near(*r, {1000 + std::log(2.0f)}, 1e-3f);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto m = run_single("ReduceMax", 13, {fvec({1, nan, 3})});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(std::isnan(m->data<float>()[0]));
}

TEST(Reduce, RejectsBadAxes) {
  Tensor x = fvec({1, 2}, {2});
  EXPECT_FALSE(run_single("ReduceSum", 13, {x, vec<int64_t>({1})}).ok());
  EXPECT_FALSE(run_single("ReduceMean", 13, {x}, {{"axes", ints_attr({0, 0})}}).ok());
  EXPECT_FALSE(run_single("ReduceSum", 13, {x, fvec({0})}).ok());
}

TEST(ArgMax, TiesNaNAndSelectLastIndex) {
  Tensor x = fvec({1, 3, 3, 2}, {4});
  auto a = run_single("ArgMax", 13, {x}, {{"keepdims", int_attr(0)}});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->shape(), (Shape{}));
  EXPECT_EQ(values<int64_t>(*a), (std::vector<int64_t>{1}));
  auto b = run_single("ArgMax", 13, {x}, {{"select_last_index", int_attr(1)}});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(values<int64_t>(*b), (std::vector<int64_t>{2}));
  auto c = run_single("ArgMin", 13, {fvec({2, std::numeric_limits<float>::quiet_NaN(), 1})});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(values<int64_t>(*c), (std::vector<int64_t>{1}));
  EXPECT_FALSE(run_single("ArgMax", 13, {fvec({}, {0})}).ok());
  EXPECT_FALSE(run_single("ArgMax", 13, {x}, {{"axis", int_attr(1)}}).ok());
}

TEST(Softmax, CoercesTo2DBeforeOpset13) {
  Tensor x = fvec({0, 0, 0, 0}, {1, 2, 2});
  // Opset 11, axis 1: one row of 4 elements.
  auto a = run_single("Softmax", 11, {x});
  ASSERT_TRUE(a.ok());
  expect_near(*a, {0.25f, 0.25f, 0.25f, 0.25f});
  // Opset 13, axis -1: rows of 2.
  auto b = run_single("Softmax", 13, {x});
  ASSERT_TRUE(b.ok());
  expect_near(*b, {0.5f, 0.5f, 0.5f, 0.5f});
  auto c = run_single("LogSoftmax", 13, {fvec({1000, 0})});
  ASSERT_TRUE(c.ok());
  expect_near(*c, {0, -1000}, 1e-3f);
  auto h = run_single("Hardmax", 13, {fvec({1, 5, 5}, {1, 3})});
  ASSERT_TRUE(h.ok());
  expect_near(*h, {0, 1, 0});
  EXPECT_FALSE(run_single("Softmax", 13, {x}, {{"axis", int_attr(3)}}).ok());
}

TEST(CumSum, ExclusiveReverseAndBadAxis) {
  Tensor x = fvec({1, 2, 3});
  auto r = run_single("CumSum", 14, {x, vec<int32_t>({0})},
                      {{"exclusive", int_attr(1)}, {"reverse", int_attr(1)}});
  ASSERT_TRUE(r.ok());
  expect_near(*r, {5, 3, 0});
  EXPECT_FALSE(run_single("CumSum", 14, {x, vec<int64_t>({1})}).ok());
  EXPECT_FALSE(run_single("CumSum", 14, {x, vec<int64_t>({0, 0})}).ok());
}

TEST(TopK, KAttributeBeforeOpset10AndStableTies) {
  Tensor x = fvec({1, 3, 3, 2});
  auto a = run_kernel("TopK", 1, {x}, {{"k", int_attr(2)}}, 2);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near((*a)[0], {3, 3});
  EXPECT_EQ(values<int64_t>((*a)[1]), (std::vector<int64_t>{1, 2}));
  auto b = run_kernel("TopK", 11, {x, vec<int64_t>({3})}, {{"largest", int_attr(0)}}, 2);
  ASSERT_TRUE(b.ok());
  expect_near((*b)[0], {1, 2, 3});
  EXPECT_EQ(values<int64_t>((*b)[1]), (std::vector<int64_t>{0, 3, 1}));
  EXPECT_FALSE(run_kernel("TopK", 11, {x, vec<int64_t>({5})}, {}, 2).ok());
  EXPECT_FALSE(run_kernel("TopK", 11, {x, vec<int64_t>({-1})}, {}, 2).ok());
}

TEST(BatchNorm, SpatialZeroAndLegacyTrainingOutputs) {
  // spatial=0 (opset 7): parameters per feature (C x D).
  Tensor x = fvec({1, 2, 3, 4}, {1, 2, 2});
  Tensor ones = fvec({1, 1, 1, 1}, {2, 2}), zeros = fvec({0, 0, 0, 0}, {2, 2});
  Tensor mean = fvec({1, 2, 3, 4}, {2, 2});
  auto a =
      run_single("BatchNormalization", 7, {x, ones, zeros, mean, ones}, {{"spatial", int_attr(0)}});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near(*a, {0, 0, 0, 0});
  // Opset 9 ignores spatial: per-channel parameters required.
  EXPECT_FALSE(run_single("BatchNormalization", 9, {x, ones, zeros, mean, ones}).ok());
  // Opset 9 training: outputs requested -> batch statistics.
  Tensor c1 = fvec({1, 1}), c0 = fvec({0, 0});
  auto t = run_kernel("BatchNormalization", 9, {x, c1, c0, c0, c1}, {}, 5);
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  expect_near((*t)[3], {1.5f, 3.5f});  // saved mean
  expect_near((*t)[4], {0.25f, 0.25f});
  expect_near((*t)[1], {0.15f, 0.35f});  // 0.9 * 0 + 0.1 * mean
  // Opset 14 forbids running outputs without training_mode.
  EXPECT_FALSE(run_kernel("BatchNormalization", 15, {x, c1, c0, c0, c1}, {}, 3).ok());
}

TEST(LayerNorm, BroadcastScaleAndOutputs) {
  Tensor x = fvec({1, 3, 2, 2}, {2, 2});
  auto r = run_kernel("LayerNormalization", 17, {x, fvec({2}, {1}), Tensor()}, {}, 3);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  expect_near((*r)[0], {-2, 2, 0, 0}, 1e-3f);
  EXPECT_EQ((*r)[1].shape(), (Shape{2, 1}));
  expect_near((*r)[1], {2, 2});
  EXPECT_FALSE(run_single("LayerNormalization", 17, {x, fvec({1, 2, 3})}).ok());
}

TEST(Losses, IgnoreIndexWeightsAndBadTargets) {
  // logp rows: target 0 -> -(-1), target 1 (ignored).
  Tensor logp = fvec({-1, -2, -3, -4}, {2, 2});
  auto a = run_single("NegativeLogLikelihoodLoss", 13, {logp, vec<int64_t>({0, 1})},
                      {{"ignore_index", int_attr(1)}});
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  expect_near(*a, {1});
  auto b = run_single("NegativeLogLikelihoodLoss", 13, {logp, vec<int64_t>({0, 1}), fvec({2, 1})},
                      {{"reduction", string_attr("none")}});
  ASSERT_TRUE(b.ok());
  expect_near(*b, {2, 4});
  EXPECT_FALSE(run_single("NegativeLogLikelihoodLoss", 13, {logp, vec<int64_t>({0, 2})}).ok());
  EXPECT_FALSE(run_single("NegativeLogLikelihoodLoss", 13, {logp, vec<int64_t>({0})}).ok());
  EXPECT_FALSE(run_single("NegativeLogLikelihoodLoss", 13, {logp, vec<int64_t>({0, 1})},
                          {{"reduction", string_attr("avg")}})
                   .ok());
  auto s =
      run_kernel("SoftmaxCrossEntropyLoss", 13, {fvec({0, 0}, {1, 2}), vec<int64_t>({1})}, {}, 2);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  expect_near((*s)[0], {std::log(2.0f)});
  expect_near((*s)[1], {-std::log(2.0f), -std::log(2.0f)});
}

ir::Attribute eq(const std::string& e) { return string_attr(e); }

TEST(Einsum, EllipsisImplicitOutputAndDiagonal) {
  Tensor a = fvec({1, 2, 3, 4}, {2, 2});
  // Trace via repeated label, implicit scalar output.
  auto t = run_single("Einsum", 12, {a}, {{"equation", eq("ii")}});
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (Shape{}));
  expect_near(*t, {5});
  // Implicit output sorts labels: "ji" -> "ij" is a transpose.
  auto tr = run_single("Einsum", 12, {a}, {{"equation", eq("ji")}});
  ASSERT_TRUE(tr.ok());
  expect_near(*tr, {1, 3, 2, 4});
  // Ellipsis broadcasting: [2,1,2] x [3,2] over "...k,...k->...".
  Tensor b = fvec({1, 0, 0, 1}, {2, 1, 2});
  Tensor c = fvec({1, 2, 3, 4, 5, 6}, {3, 2});
  auto e = run_single("Einsum", 12, {b, c}, {{"equation", eq("...k, ...k -> ...")}});
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ(e->shape(), (Shape{2, 3}));
  expect_near(*e, {1, 3, 5, 2, 4, 6});
  // Matmul with three operands.
  auto m = run_single("Einsum", 12, {a, a, a}, {{"equation", eq("ij,jk,kl->il")}});
  ASSERT_TRUE(m.ok());
  expect_near(*m, {37, 54, 81, 118});
}

TEST(Einsum, RejectsBadEquations) {
  Tensor a = fvec({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("i")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("ii")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("ij->k")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("ij->ii")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("i1")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a, a}, {{"equation", eq("ij")}}).ok());
  EXPECT_FALSE(run_single("Einsum", 12, {a}, {{"equation", eq("......")}}).ok());
}

TEST(Det, BatchedAndSingular) {
  Tensor x = fvec({2, 0, 0, 3, 1, 2, 2, 4}, {2, 2, 2});
  auto r = run_single("Det", 11, {x});
  ASSERT_TRUE(r.ok());
  expect_near(*r, {6, 0});
  auto p = run_single("Det", 11, {fvec({0, 1, 1, 0}, {2, 2})});
  ASSERT_TRUE(p.ok());
  expect_near(*p, {-1});
  EXPECT_FALSE(run_single("Det", 11, {fvec({1, 2}, {1, 2})}).ok());
}

}  // namespace
}  // namespace osprey
