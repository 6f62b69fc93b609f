// GroupNormalization on the CPU kernel against the reference: opsets 18 (a scale and bias per
// group) and 21 (per channel), 3-D to 5-D inputs, one group to one group per channel, offset
// values (the mean far from 0), one and two threads, within a float rounding of the
// reference's double arithmetic; other types and bad parameters run the reference, whose
// errors it keeps.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

TEST(CpuGroupNorm, MatchesTheReferenceOnShapesGroupsOpsetsAndThreads) {
  ThreadPool pool2(2);
  struct Case {
    Shape shape;
    int64_t groups;
  };
  for (int opset : {18, 21}) {
    for (const Case& c : std::vector<Case>{{{1, 32, 16, 16}, 8}, {{2, 6, 7}, 3}, {{1, 4, 3, 2, 5}, 4},
                                           {{3, 5, 9, 9}, 1}, {{1, 64, 40, 40}, 32}}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + " " + shape_to_string(c.shape) + " groups " +
                   std::to_string(c.groups));
      const int64_t params = opset >= 21 ? c.shape[1] : c.groups;
      Tensor x = random_tensor(c.shape, 3);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = 4.0f + 2.0f * x.data<float>()[i];
      const Attrs attrs = {{"num_groups", int_attr(c.groups)}, {"epsilon", float_attr(1e-3f)}};
      NodeRunner ref("GroupNormalization", "", opset, attrs, Device::ref);
      NodeRunner fast("GroupNormalization", "", opset, attrs, Device::cpu);
      ASSERT_TRUE(fast.found());
      expect_close_to_reference(ref, fast, {x, random_tensor({params}, 4), random_tensor({params}, 5)}, &pool2, 1e-5);
    }
  }
}

TEST(CpuGroupNorm, BadParametersGetTheReferencesErrors) {
  NodeRunner fast("GroupNormalization", "", 21, {{"num_groups", int_attr(3)}}, Device::cpu);
  const Tensor x = random_tensor({1, 4, 5}, 6);
  auto r = fast.run({x, random_tensor({4}, 7), random_tensor({4}, 8)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("num_groups"), std::string::npos) << r.status().to_string();
  NodeRunner fast18("GroupNormalization", "", 18, {{"num_groups", int_attr(2)}}, Device::cpu);
  auto r2 = fast18.run({x, random_tensor({4}, 7), random_tensor({4}, 8)});  // 4 values for 2 groups
  ASSERT_FALSE(r2.ok());
  EXPECT_NE(r2.status().to_string().find("scale"), std::string::npos) << r2.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
