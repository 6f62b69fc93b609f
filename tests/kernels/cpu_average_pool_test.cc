// ONNX AveragePool (float32, 1-D to 3-D) on oneDNN's average pooling against the reference:
// padding counted and not, strides, SAME pads, ceil_mode, dilations (opset 19), one and two
// threads, within 1e-6 (oneDNN sums in float, the reference in double); the ceil_mode window
// past the end padding with count_include_pad, and other forms, run the reference itself.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

struct Case {
  Attrs attrs;
  Shape shape;
  int opset = 11;
};

TEST(CpuAveragePool, MatchesTheReferenceOnPadsStridesAndThreads) {
  ThreadPool pool2(2);
  const Attrs k3 = {{"kernel_shape", ints_attr({3, 3})}, {"pads", ints_attr({1, 1, 1, 1})}};
  Attrs k3_incl = k3;
  k3_incl["count_include_pad"] = int_attr(1);
  const std::vector<Case> cases = {
      {k3, {1, 64, 20, 20}},
      {k3_incl, {2, 3, 9, 8}},
      {{{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}, {"ceil_mode", int_attr(1)}}, {2, 3, 9, 8}},
      {{{"kernel_shape", ints_attr({2, 2})}, {"auto_pad", string_attr("SAME_UPPER")}}, {1, 5, 7, 7}},
      {{{"kernel_shape", ints_attr({2, 2})}, {"dilations", ints_attr({2, 2})}}, {1, 4, 8, 9}, 19},
      {{{"kernel_shape", ints_attr({3})}, {"strides", ints_attr({2})}, {"pads", ints_attr({1, 2})}}, {2, 6, 17}},
      {{{"kernel_shape", ints_attr({2, 2, 2})}, {"count_include_pad", int_attr(1)}, {"pads", ints_attr({0, 1, 1, 1, 0, 1})}},
       {1, 3, 4, 5, 6}},
      // ceil_mode with count_include_pad: the reference's own result.
      {{{"kernel_shape", ints_attr({3, 3})}, {"strides", ints_attr({2, 2})}, {"ceil_mode", int_attr(1)},
        {"count_include_pad", int_attr(1)}, {"pads", ints_attr({1, 1, 1, 1})}},
       {1, 2, 8, 8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(shape_to_string(c.shape) + " opset " + std::to_string(c.opset));
    Tensor x = random_tensor(c.shape, 4);
    for (int64_t i = 0; i < x.numel(); i += 13) x.data<float>()[i] += 100.0f;  // far from zero
    NodeRunner ref("AveragePool", "", c.opset, c.attrs, Device::ref);
    NodeRunner cpu("AveragePool", "", c.opset, c.attrs, Device::cpu, {Tensor()});
    expect_close_to_reference(ref, cpu, {x}, &pool2, 1e-6);
  }
}

TEST(CpuAveragePool, ErrorsAreTheReferences) {
  NodeRunner none("AveragePool", "", 11, {}, Device::cpu, {Tensor()});
  auto no_kernel = none.run({random_tensor({1, 2, 4, 4}, 1)});
  ASSERT_FALSE(no_kernel.ok());
  EXPECT_NE(no_kernel.status().message().find("kernel_shape"), std::string::npos) << no_kernel.status().to_string();
  NodeRunner big("AveragePool", "", 11, {{"kernel_shape", ints_attr({5, 5})}}, Device::cpu, {Tensor()});
  auto too_big = big.run({random_tensor({1, 2, 3, 3}, 1)});
  ASSERT_FALSE(too_big.ok());
  NodeRunner flat("AveragePool", "", 11, {{"kernel_shape", ints_attr({1})}}, Device::cpu, {Tensor()});
  auto rank2 = flat.run({random_tensor({4, 4}, 1)});
  ASSERT_FALSE(rank2.ok());
}

}  // namespace
}  // namespace osprey::testing
