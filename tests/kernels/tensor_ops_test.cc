// Unit tests for the shape and data-movement reference kernels: edge cases the ONNX node
// cases do not cover (negative steps, clamping, strings, reductions, bad indices).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace osprey {
namespace {

using namespace osprey::testing;

TEST(TensorOps, SliceNegativeStepsClampToBounds) {
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  auto r = run_single(
      "Slice", 13,
      {iota(10), vec<int64_t>({-1}), vec<int64_t>({kMin}), vec<int64_t>({0}), vec<int64_t>({-3})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{9, 6, 3, 0}));
  // Start past the end with a negative step is clamped to the last element.
  r = run_single("Slice", 13,
                 {iota(5), vec<int64_t>({100}), vec<int64_t>({1}), Tensor(), vec<int64_t>({-2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{4, 2}));
  // Zero step is an error.
  EXPECT_FALSE(
      run_single("Slice", 13,
                 {iota(5), vec<int64_t>({0}), vec<int64_t>({5}), Tensor(), vec<int64_t>({0})})
          .ok());
}

TEST(TensorOps, SliceLegacyAttributesAndStrings) {
  auto s = vec<std::string>({"a", "b", "c", "d", "e", "f"}, {2, 3});
  auto r = run_single(
      "Slice", 1, {s},
      {{"starts", ints_attr({1})}, {"ends", ints_attr({100})}, {"axes", ints_attr({1})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 2}));
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"b", "c", "e", "f"}));
}

TEST(TensorOps, ReshapeAllowZeroAndViews) {
  auto x = iota(6, {2, 3});
  auto r = run_single("Reshape", 14, {x, vec<int64_t>({0, -1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 3}));
  EXPECT_EQ(r->raw_data(), x.raw_data());  // a view, not a copy
  auto empty = iota(0, {0, 3});
  r = run_single("Reshape", 14, {empty, vec<int64_t>({3, 0})}, {{"allowzero", int_attr(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{3, 0}));
  EXPECT_FALSE(
      run_single("Reshape", 14, {empty, vec<int64_t>({0, -1})}, {{"allowzero", int_attr(1)}}).ok());
  EXPECT_FALSE(run_single("Reshape", 14, {x, vec<int64_t>({4, -1})}).ok());
  EXPECT_FALSE(run_single("Reshape", 14, {x, vec<int64_t>({-1, -1})}).ok());
}

TEST(TensorOps, SqueezeUnsqueezeAcrossOpsets) {
  auto x = iota(3, {1, 3, 1});
  auto r = run_single("Squeeze", 11, {x}, {{"axes", ints_attr({-1})}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{1, 3}));
  r = run_single("Squeeze", 13, {x});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->shape(), (Shape{3}));
  EXPECT_FALSE(run_single("Squeeze", 13, {x, vec<int64_t>({1})}).ok());  // dim 3 cannot be squeezed
  r = run_single("Unsqueeze", 13, {iota(3), vec<int64_t>({-1, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{1, 3, 1}));
  EXPECT_FALSE(run_single("Unsqueeze", 13, {iota(3), vec<int64_t>({0, 0})}).ok());
}

TEST(TensorOps, GatherRejectsOutOfRangeIndices) {
  auto x = iota(6, {3, 2});
  auto r = run_single("Gather", 13, {x, vec<int64_t>({-1, 0})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{4, 5, 0, 1}));
  EXPECT_FALSE(run_single("Gather", 13, {x, vec<int64_t>({3})}).ok());
  EXPECT_FALSE(run_single("Gather", 13, {x, vec<int32_t>({-4})}).ok());
  // Indices wider than the data on a non-axis dimension would read out of bounds.
  EXPECT_FALSE(
      run_single("GatherElements", 13, {x, vec<int64_t>(std::vector<int64_t>(9, 0), {3, 3})}).ok());
}

TEST(TensorOps, GatherNDWithBatchDims) {
  auto x = iota(8, {2, 2, 2});
  auto r =
      run_single("GatherND", 13, {x, vec<int64_t>({1, 0}, {2, 1})}, {{"batch_dims", int_attr(1)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 2}));
  EXPECT_EQ(values<float>(*r), (std::vector<float>{2, 3, 4, 5}));
  EXPECT_FALSE(
      run_single("GatherND", 13, {x, vec<int64_t>({2, 0}, {2, 1})}, {{"batch_dims", int_attr(1)}})
          .ok());
}

TEST(TensorOps, ScatterReductions) {
  auto x = vec<float>({1, 1, 1, 1});
  auto r = run_single("ScatterND", 16, {x, vec<int64_t>({1, 1, 3}, {3, 1}), vec<float>({2, 3, 5})},
                      {{"reduction", string_attr("mul")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{1, 6, 1, 5}));
  r = run_single("ScatterElements", 16, {x, vec<int64_t>({0, 0, -1}), vec<float>({2, 3, 4})},
                 {{"reduction", string_attr("add")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{6, 1, 1, 5}));
  // add is not in opset 13; out-of-range indices are errors.
  EXPECT_FALSE(run_single("ScatterElements", 13, {x, vec<int64_t>({0}), vec<float>({2})},
                          {{"reduction", string_attr("add")}})
                   .ok());
  EXPECT_FALSE(run_single("ScatterND", 16, {x, vec<int64_t>({4}, {1, 1}), vec<float>({2})}).ok());
}

TEST(TensorOps, PadModesAndNegativePads) {
  auto x = vec<int32_t>({1, 2, 3});
  auto r = run_single("Pad", 13, {x, vec<int64_t>({5, 4})}, {{"mode", string_attr("reflect")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>(*r), (std::vector<int32_t>{2, 1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}));
  r = run_single("Pad", 13, {x, vec<int64_t>({-1, 2})}, {{"mode", string_attr("edge")}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<int32_t>(*r), (std::vector<int32_t>{2, 3, 3, 3}));
  r = run_single("Pad", 13,
                 {vec<std::string>({"a"}), vec<int64_t>({1, 1}), vec<std::string>({"z"})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"z", "a", "z"}));
  r = run_single("Pad", 2, {iota(2)}, {{"pads", ints_attr({1, 0})}, {"value", float_attr(7)}});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{7, 0, 1}));
  EXPECT_FALSE(run_single("Pad", 13, {x, vec<int64_t>({-2, -2})}).ok());
}

TEST(TensorOps, SplitZeroSizedAndErrors) {
  auto outs = run_kernel("Split", 13, {iota(3), vec<int64_t>({0, 3, 0})}, {}, 3);
  ASSERT_TRUE(outs.ok()) << outs.status().to_string();
  EXPECT_EQ((*outs)[0].shape(), (Shape{0}));
  EXPECT_EQ(values<float>((*outs)[1]), (std::vector<float>{0, 1, 2}));
  EXPECT_FALSE(run_kernel("Split", 13, {iota(3), vec<int64_t>({1, 1})}, {}, 2).ok());
  EXPECT_FALSE(run_kernel("Split", 13, {iota(3)}, {}, 2).ok());
}

TEST(TensorOps, UniqueUnsortedAllOutputs) {
  auto outs =
      run_kernel("Unique", 11, {vec<int64_t>({3, 1, 3, 2, 1})}, {{"sorted", int_attr(0)}}, 4);
  ASSERT_TRUE(outs.ok()) << outs.status().to_string();
  EXPECT_EQ(values<int64_t>((*outs)[0]), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(values<int64_t>((*outs)[1]), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(values<int64_t>((*outs)[2]), (std::vector<int64_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(values<int64_t>((*outs)[3]), (std::vector<int64_t>{2, 2, 1}));
  auto s = run_kernel("Unique", 11, {vec<std::string>({"b", "a", "b"})}, {}, 1);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(values<std::string>((*s)[0]), (std::vector<std::string>{"a", "b"}));
}

TEST(TensorOps, TransposeTileExpandOnStrings) {
  auto s = vec<std::string>({"a", "b", "c", "d", "e", "f"}, {2, 3});
  auto r = run_single("Transpose", 13, {s});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"a", "d", "b", "e", "c", "f"}));
  r = run_single("Tile", 13, {vec<std::string>({"x", "y"}), vec<int64_t>({2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"x", "y", "x", "y"}));
  r = run_single("Expand", 13, {vec<std::string>({"x", "y"}, {2, 1}), vec<int64_t>({2, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<std::string>(*r), (std::vector<std::string>{"x", "x", "y", "y"}));
  EXPECT_FALSE(run_single("Transpose", 13, {s}, {{"perm", ints_attr({0, 0})}}).ok());
  EXPECT_FALSE(run_single("Tile", 13, {iota(2), vec<int64_t>({-1})}).ok());
  EXPECT_FALSE(run_single("Expand", 13, {iota(2), vec<int64_t>({3})}).ok());
}

TEST(TensorOps, OneHotAndNonZero) {
  auto r = run_single("OneHot", 11, {vec<int64_t>({-1, 5}), vec<int64_t>({3}), vec<float>({0, 1})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), (std::vector<float>{0, 0, 1, 0, 0, 0}));
  r = run_single("NonZero", 13, {vec<bool>({false, true, true, false}, {2, 2})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->shape(), (Shape{2, 2}));
  EXPECT_EQ(values<int64_t>(*r), (std::vector<int64_t>{0, 1, 1, 0}));
}

TEST(TensorOps, DropoutTrainingIsSeededAndScaled) {
  auto x = iota(64);
  Attrs seed{{"seed", int_attr(42)}};
  auto a = run_kernel("Dropout", 13, {x, vec<float>({0.5f}), Tensor::scalar<bool>(true)}, seed, 2);
  auto b = run_kernel("Dropout", 13, {x, vec<float>({0.5f}), Tensor::scalar<bool>(true)}, seed, 2);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(values<float>((*a)[0]), values<float>((*b)[0]));
  const auto y = values<float>((*a)[0]);
  const auto m = values<bool>((*a)[1]);
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(y[i], m[i] ? 2.0f * static_cast<float>(i) : 0.0f);
  // Inference: pass-through, mask all true.
  auto c = run_kernel("Dropout", 13, {x}, {}, 2);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ((*c)[0].raw_data(), x.raw_data());
  for (bool v : values<bool>((*c)[1])) EXPECT_TRUE(v);
  EXPECT_FALSE(run_single("Dropout", 13, {x, vec<float>({1.0f}), Tensor::scalar<bool>(true)}).ok());
}

TEST(TensorOps, LayoutErrors) {
  EXPECT_FALSE(
      run_single("Concat", 13, {iota(6, {2, 3}), iota(4, {2, 2})}, {{"axis", int_attr(0)}}).ok());
  EXPECT_FALSE(
      run_single("DepthToSpace", 13, {iota(12, {1, 3, 2, 2})}, {{"blocksize", int_attr(2)}}).ok());
  EXPECT_FALSE(
      run_single("SpaceToDepth", 13, {iota(12, {1, 1, 3, 4})}, {{"blocksize", int_attr(2)}}).ok());
  EXPECT_FALSE(run_single("ReverseSequence", 10, {iota(6, {3, 2}), vec<int64_t>({4, 1})}).ok());
  EXPECT_FALSE(run_single("Compress", 11, {iota(3), vec<bool>({false, false, false, true})}).ok());
  auto r = run_single("Trilu", 14,
                      {iota(9, {3, 3}), vec<int64_t>({std::numeric_limits<int64_t>::min()})});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(values<float>(*r), values<float>(iota(9)));  // upper with k -> -inf keeps all
}

}  // namespace
}  // namespace osprey
