// Softmax / LogSoftmax (row, middle-axis and oneDNN forms) against the reference kernels: opset 11 (2-D coercion at
// `axis`) and 13 (one axis), last and middle axes, masked rows (-1e9 like attention masks),
// one and two threads.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

struct Case {
  Shape shape;
  int opset;
  int64_t axis;
};

TEST(CpuSoftmax, MatchesReferenceOnAxesAndOpsets) {
  const std::vector<Case> cases = {{{1, 12, 16, 16}, 13, -1}, {{2, 3, 5}, 13, 1},  {{2, 3, 5}, 13, 0},
                                   {{4, 7}, 11, 1},           {{2, 3, 4, 5}, 11, 2}, {{3, 1000}, 13, -1},
                                   {{2, 3, 4}, 11, 3},        {{1, 1, 1}, 13, -1},
                                   {{1, 85, 20, 20}, 13, 1},  {{2, 5, 33}, 13, 1}};
  ThreadPool pool2(2);
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(op) + " " + shape_to_string(c.shape) + " opset " + std::to_string(c.opset) +
                   " axis " + std::to_string(c.axis));
      Tensor x = random_tensor(c.shape, 5);
      for (int64_t i = 0; i < x.numel(); i += 7) x.data<float>()[i] *= 20.0f;  // wide range
      const Attrs attrs = {{"axis", int_attr(c.axis)}};
      NodeRunner ref(op, "", c.opset, attrs, Device::ref);
      NodeRunner fast(op, "", c.opset, attrs, Device::cpu, {Tensor()});
      expect_close_to_reference(ref, fast, {x}, &pool2, 1e-5);
    }
  }
}

TEST(CpuSoftmax, MaskedScoresAndBadAxis) {
  Tensor x = random_tensor({2, 4, 8}, 9);
  for (int64_t i = 0; i < x.numel(); ++i)
    if (i % 8 >= 5) x.data<float>()[i] = -1e9f;  // masked positions
  NodeRunner ref("Softmax", "", 13, {}, Device::ref);
  NodeRunner fast("Softmax", "", 13, {}, Device::cpu);
  auto want = ref.run({x});
  auto got = fast.run({x});
  ASSERT_TRUE(want.ok() && got.ok());
  expect_close(*got, *want, 1e-6);
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (i % 8 >= 5) {
      EXPECT_EQ(got->data<float>()[i], 0.0f);
    }
  }
  NodeRunner bad("Softmax", "", 13, {{"axis", int_attr(3)}}, Device::cpu);
  auto r = bad.run({x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("axis"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
