// Concat on the threaded memcpy kernel (concat_cpu.cc) against the reference, bit for bit:
// float32, int64 and uint8 tensors, first, middle, last and negative axes, one to four inputs,
// an input empty along the axis, an empty output, one and two threads; malformed calls and
// strings get the reference's results and errors.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

// A tensor of `shape` and type `dt` holding distinct values from `seed`.
Tensor filled(DType dt, const Shape& shape, int seed) {
  Tensor t(dt, shape);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = seed * 1000 + i;
    if (dt == DType::kFloat32) t.data<float>()[i] = static_cast<float>(v) * 0.5f;
    else if (dt == DType::kInt64) t.data<int64_t>()[i] = v;
    else t.data<uint8_t>()[i] = static_cast<uint8_t>(v);
  }
  return t;
}

TEST(CpuConcat, MatchesReferenceBitForBit) {
  ThreadPool pool2(2);
  struct Case {
    std::vector<Shape> shapes;
    int64_t axis;
  };
  const std::vector<Case> cases = {
      {{{1, 128, 20, 20}, {1, 64, 20, 20}}, 1},
      {{{2, 3, 4}, {2, 5, 4}, {2, 1, 4}, {2, 2, 4}}, -2},
      {{{3, 4}, {2, 4}}, 0},
      {{{3, 4}, {3, 7}}, 1},
      {{{2, 0, 3}, {2, 4, 3}}, 1},
      {{{5}}, 0},
      {{{0, 3}, {0, 3}}, 0},
  };
  for (DType dt : {DType::kFloat32, DType::kInt64, DType::kUInt8}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " " + shape_to_string(c.shapes[0]) + " axis " + std::to_string(c.axis));
      std::vector<Tensor> in;
      for (size_t i = 0; i < c.shapes.size(); ++i) in.push_back(filled(dt, c.shapes[i], static_cast<int>(i) + 1));
      const Attrs attrs = {{"axis", int_attr(c.axis)}};
      expect_same_as_reference(NodeRunner("Concat", "", 13, attrs, Device::ref, {}, dt),
                               NodeRunner("Concat", "", 13, attrs, Device::cpu, {}, dt), in, &pool2);
    }
  }
}

TEST(CpuConcat, MalformedCallsGetTheReferenceErrors) {
  NodeRunner ref("Concat", "", 13, {{"axis", int_attr(1)}}, Device::ref);
  NodeRunner cpu("Concat", "", 13, {{"axis", int_attr(1)}}, Device::cpu);
  const std::vector<std::vector<Tensor>> bad = {
      {random_tensor({2, 3}, 1), random_tensor({3, 3}, 2)},     // a dim outside the axis differs
      {random_tensor({2, 3}, 1), random_tensor({2, 3, 1}, 2)},  // ranks differ
      {random_tensor({2, 3}, 1), filled(DType::kInt64, {2, 3}, 2)},  // types differ
  };
  for (const auto& in : bad) {
    auto want = ref.run(in);
    auto got = cpu.run(in);
    ASSERT_FALSE(want.ok());
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().to_string(), want.status().to_string());
  }
  NodeRunner axis_out("Concat", "", 13, {{"axis", int_attr(2)}}, Device::cpu);
  auto r = axis_out.run({random_tensor({2, 3}, 1), random_tensor({2, 3}, 2)});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey::testing
