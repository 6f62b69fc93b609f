// Cast between float32 and float16 on the CPU kernel against the reference, bit for bit: every
// one of the 65536 halves widened, and floats narrowed across the half range (ties, the
// overflow boundary, half denormals, NaNs with payloads, infinities, signed zeros), lengths
// with tails, one and two threads; bool, int64 and int32 to float32; other casts run the
// reference.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <limits>

#include "cpu_test_harness.h"

namespace osprey::testing {
namespace {

TEST(CpuCast, HalfToFloatMatchesTheReferenceOnEveryHalf) {
  Tensor x(DType::kFloat16, {65536 + 5});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<Float16>()[i].bits = static_cast<uint16_t>(i);
  const Attrs attrs = {{"to", int_attr(static_cast<int64_t>(DType::kFloat32))}};
  NodeRunner ref("Cast", "", 13, attrs, Device::ref, {}, DType::kFloat16);
  NodeRunner fast("Cast", "", 13, attrs, Device::cpu, {}, DType::kFloat16);
  ThreadPool pool2(2);
  expect_same_as_reference(ref, fast, {x}, &pool2);
}

TEST(CpuCast, FloatToHalfMatchesTheReferenceOnSpecialAndRangeValues) {
  std::vector<float> v;
  const float inf = std::numeric_limits<float>::infinity();
  for (float s : {1.0f, -1.0f}) {
    for (float m = 1e-9f; m < 1e6f; m *= 1.013f) v.push_back(s * m);
    for (float f : {0.0f, 65504.0f, 65519.99f, 65520.0f, 65536.0f, 5.9604645e-8f, 2.9802322e-8f, 2.9802326e-8f,
                    6.1035156e-5f, 6.1028e-5f, 1.00048828125f, 1.00146484375f, inf})
      v.push_back(s * f);
  }
  for (uint32_t payload : {0x7fc00000u, 0x7f800001u, 0x7fffffffu, 0xffc00000u, 0xff812345u, 0x7fa00000u})
    v.push_back(std::bit_cast<float>(payload));
  Tensor x = Tensor::from_vector(v);
  const Attrs attrs = {{"to", int_attr(static_cast<int64_t>(DType::kFloat16))}};
  NodeRunner ref("Cast", "", 13, attrs, Device::ref);
  NodeRunner fast("Cast", "", 13, attrs, Device::cpu);
  ThreadPool pool2(2);
  expect_same_as_reference(ref, fast, {x}, &pool2);
  expect_same_as_reference(ref, fast, {random_tensor({3, 1000, 7}, 2)}, &pool2);
}

TEST(CpuCast, MasksAndIdsToFloatMatchTheReference) {
  ThreadPool pool2(2);
  const Attrs attrs = {{"to", int_attr(static_cast<int64_t>(DType::kFloat32))}};
  Tensor mask(DType::kBool, {3, 5000});
  for (int64_t i = 0; i < mask.numel(); ++i) mask.data<bool>()[i] = (i * 7919) % 3 == 0;
  std::vector<int64_t> ids = {0, 1, -1, 16777217, -16777219, (int64_t{1} << 53) + 1, INT64_MAX, INT64_MIN};
  for (int64_t i = 0; i < 20000; ++i) ids.push_back(i * 104729 - 1000000);
  std::vector<int32_t> small = {0, 7, -7, 16777217, INT32_MAX, INT32_MIN};
  const std::vector<std::pair<Tensor, DType>> cases = {
      {mask, DType::kBool}, {vec<int64_t>(ids), DType::kInt64}, {vec<int32_t>(small), DType::kInt32}};
  for (const auto& [x, t] : cases) {
    SCOPED_TRACE(dtype_name(t));
    NodeRunner ref("Cast", "", 13, attrs, Device::ref, {}, t);
    NodeRunner fast("Cast", "", 13, attrs, Device::cpu, {}, t);
    expect_same_as_reference(ref, fast, {x}, &pool2);
  }
}

TEST(CpuCast, OtherCastsAndErrorsAreTheReferences) {
  ThreadPool pool2(2);
  const Tensor x = awkward_tensor({5, 7}, 3);
  for (DType to : {DType::kInt64, DType::kBFloat16, DType::kFloat64, DType::kBool, DType::kFloat32}) {
    const Attrs attrs = {{"to", int_attr(static_cast<int64_t>(to))}};
    NodeRunner ref("Cast", "", 13, attrs, Device::ref);
    NodeRunner fast("Cast", "", 13, attrs, Device::cpu);
    expect_same_as_reference(ref, fast, {x}, &pool2);
  }
  NodeRunner bad("Cast", "", 13, {{"to", int_attr(99)}}, Device::cpu);
  auto r = bad.run({x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("'to' = 99"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
