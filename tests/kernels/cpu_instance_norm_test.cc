// InstanceNormalization on the row kernel (norm_groups_cpu.cc) against the reference kernel,
// the oracle: ranks 2 to 5, planes of 1 to 4096 elements (a vector tail, a plane of one value),
// values far from zero (the mean and variance summed in double), one and two threads, y over
// x's bytes; parameters that are not one float32 per channel fall to the reference and its
// error.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

TEST(CpuInstanceNorm, MatchesReference) {
  ThreadPool pool2(2);
  const std::vector<Shape> shapes = {{2, 3, 5, 7}, {1, 64, 64, 64}, {1, 5, 1}, {3, 4}, {2, 3, 2, 3, 5}, {1, 8, 4097}};
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(shape_to_string(shape));
    Tensor x = random_tensor(shape, 3);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 100.0f + 3.0f * x.data<float>()[i];
    const Tensor scale = random_tensor({shape[1]}, 4), bias = random_tensor({shape[1]}, 5);
    const Attrs attrs = {{"epsilon", float_attr(1e-3f)}};
    NodeRunner ref("InstanceNormalization", "", 6, attrs, Device::ref);
    NodeRunner fast("InstanceNormalization", "", 6, attrs, Device::cpu);
    ASSERT_TRUE(fast.found());
    auto want = ref.run({x, scale, bias});
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = fast.run({x, scale, bias}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *want, 2e-6);
    }
  }
}

TEST(CpuInstanceNorm, OtherParametersRunTheReference) {
  const Tensor x = random_tensor({1, 4, 3, 3}, 1);
  NodeRunner ref("InstanceNormalization", "", 6, {}, Device::ref);
  NodeRunner fast("InstanceNormalization", "", 6, {}, Device::cpu);
  // Scale of the wrong length: the reference's error, not a read past the end.
  auto bad = fast.run({x, random_tensor({3}, 2), random_tensor({4}, 3)});
  ASSERT_FALSE(bad.ok());
  auto bad_ref = ref.run({x, random_tensor({3}, 2), random_tensor({4}, 3)});
  ASSERT_FALSE(bad_ref.ok());
  EXPECT_EQ(bad.status().to_string(), bad_ref.status().to_string());
  // A rank-1 X: the reference's error too.
  auto bad_rank = fast.run({random_tensor({4}, 1), random_tensor({4}, 2), random_tensor({4}, 3)});
  ASSERT_FALSE(bad_rank.ok());
  EXPECT_EQ(bad_rank.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace osprey::testing
