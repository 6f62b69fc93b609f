// Pow of a float32 base by one exponent value on the CPU kernel against the reference, bit for
// bit: squares, square roots (across the magnitudes, denormals included, and the lanes where
// std::pow and the square root part: negatives, -0, -inf, NaN) and other exponents, exponents of
// several types and ranks, one and two threads; the forms it leaves (a per-element exponent, a
// broadcast that grows the shape, opset 11's mixed types) give the reference's results and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

Tensor exponent(DType t, double v, Shape shape) {
  Tensor e(t, shape);
  if (t == DType::kFloat32) e.data<float>()[0] = static_cast<float>(v);
  else if (t == DType::kFloat64) e.data<double>()[0] = v;
  else e.data<int64_t>()[0] = static_cast<int64_t>(v);
  return e;
}

TEST(CpuPow, ScalarExponentsMatchTheReferenceBitForBit) {
  ThreadPool pool2(2);
  Tensor x = awkward_tensor({2, 64, 81}, 5);
  for (int64_t i = 0; i < x.numel(); i += 5) x.data<float>()[i] *= 300.0f;  // wider magnitudes
  for (double e : {2.0, 0.5, 3.0, -0.5, 1.7, 0.0, -2.0, 1.0}) {
    for (const Shape& es : std::vector<Shape>{{}, {1}, {1, 1, 1}}) {
      SCOPED_TRACE("exponent " + std::to_string(e) + " shape " + shape_to_string(es));
      NodeRunner ref("Pow", "", 15, {}, Device::ref);
      NodeRunner fast("Pow", "", 15, {}, Device::cpu);
      expect_same_as_reference(ref, fast, {x, exponent(DType::kFloat32, e, es)}, &pool2);
    }
  }
  // Exponents of other types (opset 12 on).
  for (DType t : {DType::kFloat64, DType::kInt64}) {
    NodeRunner ref("Pow", "", 13, {}, Device::ref);
    NodeRunner fast("Pow", "", 13, {}, Device::cpu);
    expect_same_as_reference(ref, fast, {x, exponent(t, 2, {})}, &pool2);
  }
}

TEST(CpuPow, SquareRootsAgreeAcrossMagnitudesAndSpecialValues) {
  std::vector<float> v;
  for (float m = 1e-42f; m < 3e38f; m *= 1.37f) v.insert(v.end(), {m, -m, std::nextafter(m, 0.0f), m * 1.0000001f});
  const float inf = std::numeric_limits<float>::infinity();
  v.insert(v.end(), {0.0f, -0.0f, inf, -inf, std::nanf(""), -std::nanf(""), 1.0f, 4.0f, 2.0f});
  ThreadPool pool2(2);
  NodeRunner ref("Pow", "", 15, {}, Device::ref);
  NodeRunner fast("Pow", "", 15, {}, Device::cpu);
  expect_same_as_reference(ref, fast, {Tensor::from_vector(v), exponent(DType::kFloat32, 0.5, {})}, &pool2);
}

TEST(CpuPow, OtherFormsAreTheReferences) {
  ThreadPool pool2(2);
  NodeRunner ref("Pow", "", 15, {}, Device::ref);
  NodeRunner fast("Pow", "", 15, {}, Device::cpu);
  const Tensor x = random_tensor({3, 4}, 2);
  expect_same_as_reference(ref, fast, {x, random_tensor({3, 4}, 3)}, &pool2);       // per element
  expect_same_as_reference(ref, fast, {x, exponent(DType::kFloat32, 2, {1, 1, 1})}, &pool2);  // grows the rank
  // Opset 11 wants the exponent of the base's type.
  NodeRunner fast11("Pow", "", 11, {}, Device::cpu);
  auto r = fast11.run({x, exponent(DType::kFloat64, 2, {})});
  ASSERT_FALSE(r.ok());
  NodeRunner ref11("Pow", "", 11, {}, Device::ref);
  auto want = ref11.run({x, exponent(DType::kFloat64, 2, {})});
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(r.status().message(), want.status().message());
}

}  // namespace
}  // namespace osprey::testing
