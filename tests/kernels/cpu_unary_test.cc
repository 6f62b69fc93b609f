// LeakyRelu, Sqrt, Erf, HardSigmoid, HardSwish, Abs, Neg, Reciprocal, Log, Softplus, Elu, Mish,
// Floor, Ceil and Round on the CPU row kernel: bit for bit the reference's on NaN, infinities, signed zeros and wide
// values (Erf, Log, Softplus, Elu and Mish within a few 1e-7 of double oracles), every ISA variant, lengths around the vector width, in place, one
// and two threads, the attributes; and the calls handed to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

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
      {"Reciprocal", 13, {}},
      {"Floor", 13, {}},
      {"Ceil", 13, {}},
      {"Round", 11, {}}};
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

TEST(CpuUnary, RoundingMatchesTheReferenceAtHalvesAndZeros) {
  // Halves (ties to even), values just beside them, the zeros on either side of 0, and floats
  // too large to have a fraction.
  std::vector<float> v;
  for (int i = -12; i <= 12; ++i) {
    const float h = static_cast<float>(i) * 0.5f;
    v.insert(v.end(), {h, std::nextafter(h, -100.0f), std::nextafter(h, 100.0f)});
  }
  v.insert(v.end(), {-0.0f, 0.0f, -0.2f, 0.2f, -1e-30f, 8388607.5f, -8388609.0f, 3e9f, -3e9f});
  ThreadPool pool2(2);
  for (const char* op : {"Floor", "Ceil", "Round"}) {
    SCOPED_TRACE(op);
    NodeRunner ref(op, "", 11, {}, Device::ref);
    NodeRunner fast(op, "", 11, {}, Device::cpu);
    expect_same_as_reference(ref, fast, {Tensor::from_vector(v)}, &pool2);
  }
}

TEST(CpuUnary, RowKernelMatchesTheReferenceOnEveryIsaAndInPlace) {
  const std::vector<std::pair<UnaryOp, const char*>> ops = {
      {UnaryOp::kLeakyRelu, "LeakyRelu"}, {UnaryOp::kSqrt, "Sqrt"}, {UnaryOp::kHardSigmoid, "HardSigmoid"},
      {UnaryOp::kHardSwish, "HardSwish"}, {UnaryOp::kAbs, "Abs"},   {UnaryOp::kNeg, "Neg"},
      {UnaryOp::kReciprocal, "Reciprocal"}, {UnaryOp::kFloor, "Floor"}, {UnaryOp::kCeil, "Ceil"},
      {UnaryOp::kRound, "Round"}};
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

// Log, Softplus, Elu and Mish against double oracles on every ISA: within 3e-7 relative (relative to
// max(1e-30, |want|) for Log and Softplus, whose small results keep their relative accuracy;
// Elu's e^x - 1 near 0 too), over a sweep from denormals to 1e30 and the specials.
TEST(CpuUnary, LogSoftplusEluAndMishMatchDoubleOraclesOnEveryIsa) {
  std::vector<float> xs;
  for (int i = -4000; i <= 4000; ++i) xs.push_back(static_cast<float>(i) * 0.01f);
  for (float m = 1e-44f; m < 1e30f; m *= 3.7f) {
    xs.push_back(m);
    xs.push_back(-m);
  }
  for (float v : {1.0f, 0.70710677f, 0.70710683f, 1.4142135f, 88.0f, -88.0f, 1e-9f, -1e-9f}) xs.push_back(v);
  const int64_t n = static_cast<int64_t>(xs.size());
  struct Op {
    UnaryOp op;
    const char* name;
    double (*oracle)(double);
  };
  const Op ops[] = {{UnaryOp::kLog, "Log", [](double x) { return std::log(x); }},
                    {UnaryOp::kSoftplus, "Softplus", [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }},
                    {UnaryOp::kElu, "Elu", [](double x) { return x < 0 ? 0.7 * std::expm1(x) : x; }},
                    {UnaryOp::kMish, "Mish", [](double x) {
                       return x * std::tanh(x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)));
                     }}};
  for (VectorIsa isa : runnable_isas()) {
    for (const Op& op : ops) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " " + op.name);
      std::vector<float> y(xs.size());
      cpu::unary_row(isa, op.op, xs.data(), y.data(), n, 0.7f);
      double worst = 0;
      float at = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double want = op.oracle(static_cast<double>(xs[static_cast<size_t>(i)]));
        const float got = y[static_cast<size_t>(i)];
        if (std::isnan(want) || std::isinf(want)) {
          EXPECT_EQ(std::isnan(got), std::isnan(want)) << "x = " << xs[static_cast<size_t>(i)];
          if (std::isinf(want)) EXPECT_EQ(got, static_cast<float>(want)) << "x = " << xs[static_cast<size_t>(i)];
          continue;
        }
        // Elu's alpha is a float: the oracle's 0.7 rounded as the kernel's.
        const double w = op.op == UnaryOp::kElu && xs[static_cast<size_t>(i)] < 0 ? want / 0.7 * 0.7f : want;
        const double err = std::fabs(got - w) / std::max(1e-30, std::fabs(w));
        // Results in the denormals keep only their bits; so does Mish below x = -87.3, where
        // e^x (the reference's float std::exp too) is a denormal.
        const bool denormal_step = op.op == UnaryOp::kMish && xs[static_cast<size_t>(i)] < -87.3f;
        if (err > worst && std::fabs(w) > 1e-37 && !denormal_step) {
          worst = err;
          at = xs[static_cast<size_t>(i)];
        }
      }
      EXPECT_LE(worst, 3e-7) << "at x = " << at;
    }
    // The specials.
    const float inf = std::numeric_limits<float>::infinity();
    const std::vector<float> sp = {0.0f, -0.0f, inf, -inf, std::nanf(""), -1.0f};
    std::vector<float> y(sp.size());
    cpu::unary_row(isa, UnaryOp::kLog, sp.data(), y.data(), static_cast<int64_t>(sp.size()));
    EXPECT_EQ(y[0], -inf);
    EXPECT_EQ(y[1], -inf);
    EXPECT_EQ(y[2], inf);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[4]) && std::isnan(y[5]));
    cpu::unary_row(isa, UnaryOp::kSoftplus, sp.data(), y.data(), static_cast<int64_t>(sp.size()));
    EXPECT_EQ(y[2], inf);
    EXPECT_EQ(y[3], 0.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    cpu::unary_row(isa, UnaryOp::kElu, sp.data(), y.data(), static_cast<int64_t>(sp.size()), 1.0f);
    EXPECT_EQ(y[2], inf);
    EXPECT_EQ(y[3], -1.0f);
    EXPECT_TRUE(std::isnan(y[4]));
    cpu::unary_row(isa, UnaryOp::kMish, sp.data(), y.data(), static_cast<int64_t>(sp.size()));
    EXPECT_EQ(y[0], 0.0f);
    EXPECT_EQ(y[2], inf);
    EXPECT_TRUE(std::isnan(y[3]) && std::isnan(y[4]));  // -inf * 0, as the reference
  }
}

TEST(CpuUnary, LogSoftplusAndEluNodesMatchTheReferenceOnThreads) {
  ThreadPool pool2(2);
  Tensor x = random_tensor({2, 64, 90}, 23);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 6.0f;
  Tensor pos = x.clone();
  for (int64_t i = 0; i < pos.numel(); ++i) pos.data<float>()[i] = std::fabs(pos.data<float>()[i]) + 1e-3f;
  const std::vector<std::tuple<const char*, Attrs, Tensor>> cases = {
      {"Log", {}, pos}, {"Softplus", {}, x}, {"Elu", {{"alpha", float_attr(0.5f)}}, x}, {"Mish", {}, x}};
  for (const auto& [op, attrs, in] : cases) {
    SCOPED_TRACE(op);
    const int opset = std::string(op) == "Mish" ? 18 : 13;
    NodeRunner ref(op, "", opset, attrs, Device::ref);
    NodeRunner fast(op, "", opset, attrs, Device::cpu);
    expect_close_to_reference(ref, fast, {in}, &pool2, 3e-7);
  }
}

TEST(CpuUnary, ErfNodeMatchesTheReferenceOnThreads) {
  ThreadPool pool2(2);
  Tensor x = random_tensor({2, 128, 300}, 19);
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 4.0f;
  NodeRunner ref("Erf", "", 13, {}, Device::ref);
  NodeRunner fast("Erf", "", 13, {}, Device::cpu);
  expect_close_to_reference(ref, fast, {x}, &pool2, 2e-7);
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
