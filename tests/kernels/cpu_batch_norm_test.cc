// BatchNormalization in inference on the CPU kernel against the reference: NCHW, [N, C] and 3-D
// inputs, opsets 9 to 15, epsilon, one and two threads, within a float rounding of the
// reference's double arithmetic; training, the per-feature form and other types run the
// reference, whose errors it keeps.
#include <gtest/gtest.h>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

std::vector<Tensor> bn_inputs(const Shape& shape, uint32_t seed) {
  const int64_t c = shape[1];
  Tensor scale = random_tensor({c}, seed + 1), bias = random_tensor({c}, seed + 2);
  Tensor mean = random_tensor({c}, seed + 3), var = random_tensor({c}, seed + 4);
  for (int64_t k = 0; k < c; ++k) {
    var.data<float>()[k] = 0.5f + std::abs(var.data<float>()[k]);
    mean.data<float>()[k] *= 3.0f;
  }
  return {random_tensor(shape, seed), scale, bias, mean, var};
}

TEST(CpuBatchNorm, MatchesTheReferenceOnShapesOpsetsAndThreads) {
  ThreadPool pool2(2);
  for (int opset : {9, 14, 15}) {
    for (const Shape& shape : std::vector<Shape>{{1, 64, 20, 20}, {3, 5}, {2, 7, 33}, {2, 3, 2, 3, 4}}) {
      SCOPED_TRACE("opset " + std::to_string(opset) + " " + shape_to_string(shape));
      const Attrs attrs = {{"epsilon", float_attr(1e-3f)}};
      const std::vector<Tensor> in = bn_inputs(shape, 5);
      NodeRunner ref("BatchNormalization", "", opset, attrs, Device::ref);
      NodeRunner fast("BatchNormalization", "", opset, attrs, Device::cpu);
      expect_close_to_reference(ref, fast, in, &pool2, 1e-6);
    }
  }
}

TEST(CpuBatchNorm, TrainingAndBadParametersGoThroughTheReference) {
  ThreadPool pool2(2);
  // Training mode (opset 15) gives the reference's outputs, running statistics included.
  const std::vector<Tensor> in = bn_inputs({2, 3, 4, 4}, 7);
  const Attrs train = {{"training_mode", int_attr(1)}};
  NodeRunner ref("BatchNormalization", "", 15, train, Device::ref);
  NodeRunner fast("BatchNormalization", "", 15, train, Device::cpu);
  auto want = ref.run_outputs(in, 3);
  auto got = fast.run_outputs(in, 3);
  ASSERT_TRUE(want.ok() && got.ok()) << got.status().to_string();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(same_bytes((*got)[static_cast<size_t>(i)], (*want)[static_cast<size_t>(i)]));
  // A scale of the wrong length: the reference's error, naming it.
  std::vector<Tensor> bad = bn_inputs({1, 4, 2, 2}, 9);
  bad[1] = random_tensor({3}, 1);
  NodeRunner infer("BatchNormalization", "", 15, {}, Device::cpu);
  auto r = infer.run(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("scale"), std::string::npos) << r.status().to_string();
}

TEST(CpuGlobalAveragePool, MatchesTheReferenceOnRanksAndThreads) {
  ThreadPool pool2(2);
  for (const Shape& shape : std::vector<Shape>{{1, 512, 20, 20}, {2, 3, 7}, {1, 4, 3, 5, 2}, {2, 5, 1, 1}}) {
    SCOPED_TRACE(shape_to_string(shape));
    Tensor x = random_tensor(shape, 3);
    for (int64_t i = 0; i < x.numel(); i += 7) x.data<float>()[i] += 50.0f;
    NodeRunner ref("GlobalAveragePool", "", 1, {}, Device::ref);
    NodeRunner fast("GlobalAveragePool", "", 1, {}, Device::cpu);
    expect_close_to_reference(ref, fast, {x}, &pool2, 1e-6);
  }
  NodeRunner fast("GlobalAveragePool", "", 1, {}, Device::cpu);
  auto empty = fast.run({Tensor(DType::kFloat32, {1, 2, 0, 3})});
  ASSERT_FALSE(empty.ok());
  EXPECT_NE(empty.status().message().find("empty spatial"), std::string::npos) << empty.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
