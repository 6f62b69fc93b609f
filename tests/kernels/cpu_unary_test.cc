// LeakyRelu, Sqrt, Erf, HardSigmoid, HardSwish, Abs, Neg and Reciprocal on the CPU row kernel:
// bit for bit the reference's on NaN, infinities, signed zeros and wide values (Erf within
// 2e-7 of a double oracle), every ISA variant, lengths around the vector width, in place, one
// and two threads, the attributes; and the calls handed to the reference.
#include <gtest/gtest.h>

#include <cmath>

#include "cpu_test_harness.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

using cpu::UnaryOp;
using cpu::VectorIsa;

struct Op {
  const char* name;
  int opset;
  Attrs attrs;
};

const std::vector<Op>& exact_ops() {
  static const std::vector<Op> ops = {
      {"LeakyRelu", 16, {}},
      {"LeakyRelu", 16, {{"alpha", float_attr(0.1f)}}},
      {"Sqrt", 13, {}},
      {"HardSigmoid", 6, {}},
      {"HardSigmoid", 6, {{"alpha", float_attr(1.0f / 6)}, {"beta", float_attr(0.5f)}}},
      {"HardSwish", 14, {}},
      {"Abs", 13, {}},
      {"Neg", 13, {}},
      {"Reciprocal", 13, {}}};
  return ops;
}

TEST(CpuUnary, ExactOpsMatchTheReferenceBitForBitOnSpecialValuesAndThreads) {
  ThreadPool pool2(2);
  for (const Op& op : exact_ops()) {
    for (const Shape& shape : std::vector<Shape>{{}, {17}, {3, 100}, {2, 64, 81}}) {
      SCOPED_TRACE(std::string(op.name) + " " + shape_to_string(shape) + " attrs " +
                   std::to_string(op.attrs.size()));
      NodeRunner ref(op.name, "", op.opset, op.attrs, Device::ref);
      NodeRunner fast(op.name, "", op.opset, op.attrs, Device::cpu);
      expect_same_as_reference(ref, fast, {awkward_tensor(shape, 11)}, &pool2);
    }
  }
}

TEST(CpuUnary, RowKernelMatchesTheReferenceOnEveryIsaAndInPlace) {
  const std::vector<std::pair<UnaryOp, const char*>> ops = {
      {UnaryOp::kLeakyRelu, "LeakyRelu"}, {UnaryOp::kSqrt, "Sqrt"}, {UnaryOp::kHardSigmoid, "HardSigmoid"},
      {UnaryOp::kHardSwish, "HardSwish"}, {UnaryOp::kAbs, "Abs"},   {UnaryOp::kNeg, "Neg"},
      {UnaryOp::kReciprocal, "Reciprocal"}};
  for (VectorIsa isa : runnable_isas()) {
    for (const auto& [op, name] : ops) {
      for (int64_t n : {1, 15, 16, 33, 1000}) {
        SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " " + name + " n " + std::to_string(n));
        const Tensor x = awkward_tensor({n}, 13);
        const Attrs attrs = std::string(name) == "LeakyRelu"     ? Attrs{{"alpha", float_attr(0.3f)}}
                            : std::string(name) == "HardSigmoid" ? Attrs{{"alpha", float_attr(0.3f)}, {"beta", float_attr(0.4f)}}
                                                                 : Attrs{};
        auto want = run_single(name, 14, {x}, attrs);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        Tensor y = x.clone();  // in place
        cpu::unary_row(isa, op, y.data<float>(), y.data<float>(), n, 0.3f, 0.4f);
        EXPECT_TRUE(same_bytes(y, *want));
      }
    }
  }
}

TEST(CpuUnary, ErfIsWithin2e7OfADoubleOracleOnEveryIsa) {
  // A sweep through 0, 1 (where the two forms meet) and the saturated tails, with the
  // specials: erf(+-0) = +-0, erf(+-inf) = +-1, NaN stays NaN.
  std::vector<float> xs;
  for (int i = -60000; i <= 60000; ++i) xs.push_back(static_cast<float>(i) * 1e-4f);
  for (float v : {1e-30f, -1e-30f, 1e-8f, 0.999999f, 1.0f, 1.000001f, 4.0f, 9.5f, 30.0f, -30.0f})
    xs.push_back(v);
  const float inf = std::numeric_limits<float>::infinity();
  xs.insert(xs.end(), {0.0f, -0.0f, inf, -inf, std::nanf("")});
  const int64_t n = static_cast<int64_t>(xs.size());
  for (VectorIsa isa : runnable_isas()) {
    SCOPED_TRACE(cpu::vector_isa_name(isa));
    std::vector<float> y(xs.size());
    cpu::unary_row(isa, UnaryOp::kErf, xs.data(), y.data(), n);
    double worst = 0;
    int64_t at = -1;
    for (int64_t i = 0; i < n - 5; ++i) {
      const double want = std::erf(static_cast<double>(xs[static_cast<size_t>(i)]));
      const double err = std::fabs(y[static_cast<size_t>(i)] - want) / std::min(1.0, std::fabs(want) + 1e-300);
      if (err > worst) {
        worst = err;
        at = i;
      }
    }
    EXPECT_LE(worst, 2e-7) << "at x = " << (at >= 0 ? xs[static_cast<size_t>(at)] : 0.0f);
    const float* tail = y.data() + n - 5;
    EXPECT_EQ(std::bit_cast<uint32_t>(tail[0]), std::bit_cast<uint32_t>(0.0f));
    EXPECT_EQ(std::bit_cast<uint32_t>(tail[1]), std::bit_cast<uint32_t>(-0.0f));
    EXPECT_EQ(tail[2], 1.0f);
    EXPECT_EQ(tail[3], -1.0f);
    EXPECT_TRUE(std::isnan(tail[4]));
  }
}

TEST(CpuUnary, ErfNodeMatchesTheReferenceOnThreads) {
  ThreadPool pool2(2);
  Tensor x = random_tensor({2, 128, 300}, 19);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 4.0f;
  NodeRunner ref("Erf", "", 13, {}, Device::ref);
  NodeRunner fast("Erf", "", 13, {}, Device::cpu);
  ASSERT_TRUE(fast.found());
  auto want = ref.run({x});
  ASSERT_TRUE(want.ok()) << want.status().to_string();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
    auto got = fast.run({x}, pool);
    ASSERT_TRUE(got.ok()) << got.status().to_string();
    expect_close(*got, *want, 2e-7);
  }
}

TEST(CpuUnary, OtherTypesStayOnTheReference) {
  // The fast kernels are registered for float32 only; an int32 Abs or Neg finds the reference.
  NodeRunner abs_int("Abs", "", 13, {}, Device::cpu, {}, DType::kInt32);
  EXPECT_FALSE(abs_int.found());
  NodeRunner sqrt_old("Sqrt", "", 1, {}, Device::cpu);
  EXPECT_FALSE(sqrt_old.found());  // opset 1's consumed_inputs form
}

}  // namespace
}  // namespace osprey::testing
