// GatherElements on the CPU kernel against the reference, bit for bit: every axis, negative
// indices, int32 and int64 indices, float32 and int32 data, one and two threads; indices of
// another shape, other types and out-of-range indices (the reference's error) go through the
// reference.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

// Indices of `shape` into an axis of length n, some negative.
template <class Index>
Tensor indices(const Shape& shape, int64_t n, uint32_t seed) {
  Tensor t(std::is_same_v<Index, int64_t> ? DType::kInt64 : DType::kInt32, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    const int64_t k = static_cast<int64_t>(seed >> 8) % (2 * n) - n;  // [-n, n)
    t.data<Index>()[i] = static_cast<Index>(k);
  }
  return t;
}

TEST(CpuGatherElements, MatchesTheReferenceBitForBit) {
  ThreadPool pool2(2);
  const Shape data = {2, 5, 7, 3};
  for (int64_t axis : {0, 1, 2, 3, -1}) {
    Shape is = data;
    const size_t a = static_cast<size_t>(axis < 0 ? axis + 4 : axis);
    is[a] = 4;
    const int64_t n = data[a];
    const Attrs attrs = {{"axis", int_attr(axis)}};
    NodeRunner ref("GatherElements", "", 13, attrs, Device::ref);
    NodeRunner fast("GatherElements", "", 13, attrs, Device::cpu);
    SCOPED_TRACE("axis " + std::to_string(axis));
    expect_same_as_reference(ref, fast, {awkward_tensor(data, 3), indices<int64_t>(is, n, 5)}, &pool2);
    expect_same_as_reference(ref, fast, {awkward_tensor(data, 3), indices<int32_t>(is, n, 6)}, &pool2);
    Tensor ints(DType::kInt32, data);
    for (int64_t i = 0; i < ints.numel(); ++i) ints.data<int32_t>()[i] = static_cast<int32_t>(i * 37 - 500);
    NodeRunner ref_i("GatherElements", "", 13, attrs, Device::ref, {}, DType::kInt32);
    NodeRunner fast_i("GatherElements", "", 13, attrs, Device::cpu, {}, DType::kInt32);
    expect_same_as_reference(ref_i, fast_i, {ints, indices<int64_t>(is, n, 7)}, &pool2);
  }
}

TEST(CpuGatherElements, OtherShapesAndBadIndicesAreTheReferences) {
  ThreadPool pool2(2);
  const Attrs attrs = {{"axis", int_attr(1)}};
  NodeRunner ref("GatherElements", "", 13, attrs, Device::ref);
  NodeRunner fast("GatherElements", "", 13, attrs, Device::cpu);
  // Indices smaller than the data along another axis: the reference's result.
  expect_same_as_reference(ref, fast, {random_tensor({4, 6}, 1), indices<int64_t>({2, 3}, 6, 2)}, &pool2);
  // An index past the axis: the reference's error.
  Tensor bad = indices<int64_t>({4, 3}, 6, 3);
  bad.data<int64_t>()[7] = 6;
  auto want = ref.run({random_tensor({4, 6}, 1), bad});
  auto got = fast.run({random_tensor({4, 6}, 1), bad}, &pool2);
  ASSERT_FALSE(want.ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), want.status().message());
}

}  // namespace
}  // namespace osprey::testing
