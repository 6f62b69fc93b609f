// The vectorized row kernels (LayerNormalization, ReduceSum, ReduceMean, Sigmoid, Tanh, Exp, Gelu, the
// attention's masked softmax) against the reference kernels or plain double loops: every ISA variant this CPU can run, awkward sizes (tails shorter than a lane block,
// column tiles, size-1 axes), large offsets, one and two threads, and the forms handed to the
// reference (broadcast Scale, non-consecutive axes, the identity with noop_with_empty_axes).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_harness.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

using cpu::VectorIsa;

TEST(CpuRowKernels, GenericIsAlwaysRunnableAndBestIsRunnable) {
  EXPECT_TRUE(cpu::vector_isa_supported(VectorIsa::generic));
  EXPECT_TRUE(cpu::vector_isa_supported(cpu::best_vector_isa()));
  std::string names;
  for (VectorIsa isa : runnable_isas()) names += std::string(cpu::vector_isa_name(isa)) + " ";
  RecordProperty("runnable_isas", names);
}

Tensor layer_norm_ref(const Tensor& x, const Tensor& scale, const Tensor& bias, int64_t axis,
                      float eps) {
  auto r = run_single("LayerNormalization", 17, {x, scale, bias},
                      {{"axis", int_attr(axis)}, {"epsilon", float_attr(eps)}});
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? *r : Tensor();
}

TEST(CpuRowKernels, LayerNormRowsMatchTheReferenceOnEveryIsa) {
  struct Case {
    int64_t rows, m;
    bool bias;
    float offset;
  };
  const std::vector<Case> cases = {{128, 384, true, 0},  {3, 768, true, 0},   {4, 17, true, 0},
                                   {5, 1, true, 0},      {2, 15, false, 0},   {7, 33, true, 1000},
                                   {1, 4096, false, -50}, {6, 16, true, 0}};
  for (VectorIsa isa : runnable_isas()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " rows " + std::to_string(c.rows) +
                   " m " + std::to_string(c.m));
      Tensor x = random_tensor({c.rows, c.m}, 3);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] += c.offset;
      Tensor scale = random_tensor({c.m}, 4);
      Tensor bias = c.bias ? random_tensor({c.m}, 5) : Tensor();
      const Tensor want = layer_norm_ref(x, scale, bias, -1, 1e-5f);
      Tensor got(DType::kFloat32, x.shape());
      cpu::layer_norm_rows(isa, x.data<float>(), got.data<float>(), c.rows, c.m,
                           scale.data<float>(), c.bias ? bias.data<float>() : nullptr, 1e-5);
      expect_close(got, want, c.offset == 0 ? 2e-6 : 2e-3);
      // In place (x and y the same buffer) gives the same result.
      Tensor inplace = x.clone();
      cpu::layer_norm_rows(isa, inplace.data<float>(), inplace.data<float>(), c.rows, c.m,
                           scale.data<float>(), c.bias ? bias.data<float>() : nullptr, 1e-5);
      EXPECT_TRUE(bit_equal(inplace, got));
    }
  }
}

TEST(CpuRowKernels, LayerNormKernelMatchesReferenceOnAxesAndThreads) {
  struct Case {
    Shape shape;
    int64_t axis;
    Shape param;
  };
  const std::vector<Case> cases = {{{1, 128, 384}, -1, {384}},    {{2, 3, 4, 5}, 1, {3, 4, 5}},
                                   {{2, 3, 4, 5}, 2, {4, 5}},      {{2, 3, 4, 5}, 2, {1, 5}} /* broadcast: reference */,
                                   {{4, 7}, 0, {4, 7}},            {{3, 1}, -1, {1}},
                                   {{2, 3, 4}, -1, {1}} /* broadcast: reference */};
  ThreadPool pool2(2);
  for (const char* domain : {"", "com.osprey"}) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(domain) + " " + shape_to_string(c.shape) + " axis " +
                   std::to_string(c.axis) + " scale " + shape_to_string(c.param));
      const Attrs attrs = {{"axis", int_attr(c.axis)}, {"epsilon", float_attr(1e-6f)}};
      const Tensor x = random_tensor(c.shape, 11);
      const Tensor scale = random_tensor(c.param, 12), bias = random_tensor(c.param, 13);
      NodeRunner ref("LayerNormalization", "", 17, attrs, Device::ref);
      NodeRunner fast("LayerNormalization", domain, domain[0] ? 1 : 17, attrs, Device::cpu);
      ASSERT_TRUE(fast.found());
      auto want = ref.run({x, scale, bias});
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
        auto got = fast.run({x, scale, bias}, pool);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        expect_close(*got, *want, 2e-6);
        auto no_bias = fast.run({x, scale}, pool);
        auto want_no_bias = ref.run({x, scale});
        ASSERT_TRUE(no_bias.ok() && want_no_bias.ok());
        expect_close(*no_bias, *want_no_bias, 2e-6);
      }
    }
  }
}

TEST(CpuRowKernels, LayerNormKernelErrorsNameTheInput) {
  NodeRunner fast("LayerNormalization", "com.osprey", 1, {}, Device::cpu);
  ASSERT_TRUE(fast.found());
  Tensor scale64(DType::kFloat64, {4});
  auto r = fast.run({random_tensor({2, 4}, 1), scale64});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("Scale"), std::string::npos) << r.status().to_string();
  NodeRunner onnx("LayerNormalization", "", 17, {{"axis", int_attr(5)}}, Device::cpu);
  auto bad_axis = onnx.run({random_tensor({2, 4}, 1), random_tensor({4}, 2)});
  ASSERT_FALSE(bad_axis.ok());
  EXPECT_NE(bad_axis.status().message().find("axis"), std::string::npos);
}

TEST(CpuRowKernels, SumMiddleAxisMatchesADoubleLoopOnEveryIsa) {
  struct Case {
    int64_t outer, r, inner;
  };
  const std::vector<Case> cases = {{1, 49, 1280}, {2, 128, 384}, {3, 1000, 1}, {1, 1, 7},
                                   {2, 5, 513},   {1, 17, 1},    {4, 3, 1100}};
  for (VectorIsa isa : runnable_isas()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " [" + std::to_string(c.outer) + "," +
                   std::to_string(c.r) + "," + std::to_string(c.inner) + "]");
      const Tensor x = random_tensor({c.outer, c.r, c.inner}, 21);
      Tensor got(DType::kFloat32, {c.outer, c.inner});
      cpu::sum_middle_axis(isa, x.data<float>(), got.data<float>(), 0, c.outer, c.r, c.inner, 0.5);
      double worst = 0;
      for (int64_t o = 0; o < c.outer; ++o)
        for (int64_t i = 0; i < c.inner; ++i) {
          double s = 0;
          for (int64_t k = 0; k < c.r; ++k) s += x.data<float>()[(o * c.r + k) * c.inner + i];
          worst = std::max(worst, std::fabs(got.data<float>()[o * c.inner + i] - 0.5 * s));
        }
      EXPECT_LE(worst, 1e-5);
    }
  }
}

TEST(CpuRowKernels, InterleavePlanesMatchesAnIndexLoopOnEveryIsa) {
  // Plane counts 1-4 take the fixed-count loops, 5 and 7 the general one; sub-ranges check
  // that only [begin, end) is written.
  for (VectorIsa isa : runnable_isas()) {
    for (int64_t planes : {1, 2, 3, 4, 5, 7}) {
      for (int64_t plane : {1, 15, 16, 17, 50176}) {
        const Tensor x = random_tensor({planes, plane}, static_cast<uint32_t>(planes * 31 + plane));
        using Range = std::pair<int64_t, int64_t>;
        for (auto [b, e] : {Range{0, plane}, Range{plane / 3, plane - plane / 4}}) {
          SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " planes " +
                       std::to_string(planes) + " x " + std::to_string(plane) + " [" +
                       std::to_string(b) + ", " + std::to_string(e) + ")");
          std::vector<float> got(static_cast<size_t>(planes * plane), -7.0f);
          cpu::interleave_planes(isa, x.data<float>(), got.data(), planes, plane, b, e);
          int64_t wrong = 0;
          for (int64_t q = 0; q < plane; ++q)
            for (int64_t c = 0; c < planes; ++c) {
              const float want = q >= b && q < e ? x.data<float>()[c * plane + q] : -7.0f;
              wrong += got[static_cast<size_t>(q * planes + c)] != want;
            }
          EXPECT_EQ(wrong, 0);
        }
      }
    }
  }
}

TEST(CpuRowKernels, ReduceSumAndMeanMatchReferenceOnAxesOpsetsAndThreads) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;  // empty: all axes
    int64_t keepdims;
  };
  const std::vector<Case> cases = {
      {{1, 7, 7, 1280}, {1, 2}, 1}, {{1, 128, 384}, {1}, 0},     {{3, 1000}, {-1}, 1},
      {{2, 3, 4}, {}, 0},           {{2, 1, 3, 1, 4}, {1, 2}, 1}, {{2, 3, 4, 5}, {0, 2}, 1},
      {{2, 600, 3}, {0}, 0},        {{4, 5, 6}, {2, 1}, 1}};
  ThreadPool pool2(2);
  for (const char* op : {"ReduceSum", "ReduceMean"}) {
    for (int opset : {11, 13, 18}) {
      const bool axes_input = opset >= (std::string(op) == "ReduceSum" ? 13 : 18);
      for (const auto& c : cases) {
        SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset) + " " +
                     shape_to_string(c.shape) + " keepdims " + std::to_string(c.keepdims));
        Attrs attrs = {{"keepdims", int_attr(c.keepdims)}};
        if (!axes_input && !c.axes.empty()) attrs["axes"] = ints_attr(c.axes);
        std::vector<Tensor> inputs = {random_tensor(c.shape, 31)};
        if (axes_input && !c.axes.empty()) inputs.push_back(vec<int64_t>(c.axes));
        NodeRunner ref(op, "", opset, attrs, Device::ref);
        NodeRunner fast(op, "", opset, attrs, Device::cpu);
        ASSERT_TRUE(fast.found());
        auto want = ref.run(inputs);
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
          auto got = fast.run(inputs, pool);
          ASSERT_TRUE(got.ok()) << got.status().to_string();
          expect_close(*got, *want, 1e-6);
        }
      }
    }
  }
}

TEST(CpuRowKernels, ReduceIdentityAndBadAxesGoThroughTheReference) {
  const Tensor x = random_tensor({2, 3}, 41);
  NodeRunner noop("ReduceSum", "", 13, {{"noop_with_empty_axes", int_attr(1)}}, Device::cpu);
  auto same = noop.run({x});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_TRUE(bit_equal(*same, x));
  NodeRunner bad("ReduceMean", "", 11, {{"axes", ints_attr({3})}}, Device::cpu);
  auto r = bad.run({x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("axes"), std::string::npos) << r.status().to_string();
}

// Softmax of row + mask in double, the oracle for softmax_rows.
std::vector<double> softmax_oracle(const float* row, const float* mask, int64_t mask_key_stride,
                                   int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  double mx = -INFINITY;
  for (int64_t k = 0; k < n; ++k) {
    v[static_cast<size_t>(k)] = static_cast<double>(row[k]) + (mask ? mask[k * mask_key_stride] : 0.0);
    mx = std::max(mx, v[static_cast<size_t>(k)]);
  }
  double sum = 0;
  for (auto& x : v) sum += (x = std::exp(x - mx));
  for (auto& x : v) x /= sum;
  return v;
}

TEST(CpuRowKernels, MaskedSoftmaxMatchesADoubleOracleOnEveryIsa) {
  struct Case {
    int64_t rows, n;
    int mask;  // 0 none, 1 per key (row stride 0), 2 per row and key, 3 one value per row
  };
  const std::vector<Case> cases = {{4, 128, 1}, {3, 129, 2}, {5, 7, 3}, {2, 1, 1},
                                   {2, 16, 0},  {3, 33, 2},  {1, 500, 1}};
  for (VectorIsa isa : runnable_isas()) {
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " rows " + std::to_string(c.rows) +
                   " n " + std::to_string(c.n) + " mask " + std::to_string(c.mask));
      Tensor x = random_tensor({c.rows, c.n}, 51);
      for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= 40.0f;  // exp over [-80, 80]
      Tensor mask = random_tensor({c.rows, c.n}, 52);
      // -1e9 masks keys out; a mask constant along a row gets the noise only (a -1e9 added to
      // a whole row in float32 would leave only its own ulp, as in any float32 softmax).
      if (c.mask != 3)
        for (int64_t i = 0; i < mask.numel(); ++i)
          mask.data<float>()[i] = i % 5 == 3 ? -1e9f : mask.data<float>()[i];
      const int64_t row_stride = c.mask == 2 ? c.n : c.mask == 3 ? c.n : 0;
      const int64_t key_stride = c.mask == 3 ? 0 : 1;
      const float* mp = c.mask ? mask.data<float>() : nullptr;
      // Normalized in place, and unnormalized with each row's 1 / sum given back.
      for (bool with_inv : {false, true}) {
        Tensor got = x.clone();
        std::vector<float> inv(static_cast<size_t>(c.rows), -1.0f);
        cpu::softmax_rows(isa, got.data<float>(), c.rows, c.n, mp, row_stride, key_stride,
                          with_inv ? inv.data() : nullptr);
        double worst = 0;
        for (int64_t r = 0; r < c.rows; ++r) {
          const auto want = softmax_oracle(x.data<float>() + r * c.n, mp ? mp + r * row_stride : nullptr,
                                           key_stride, c.n);
          if (with_inv) {
            EXPECT_GT(inv[static_cast<size_t>(r)], 0.0f);
          }
          const float s = with_inv ? inv[static_cast<size_t>(r)] : 1.0f;
          for (int64_t k = 0; k < c.n; ++k) {
            const float g = s * got.data<float>()[r * c.n + k];
            worst = std::max(worst, std::fabs(g - want[static_cast<size_t>(k)]));
            if (want[static_cast<size_t>(k)] == 0.0) {
              EXPECT_EQ(g, 0.0f) << "masked key " << k;
            }
          }
        }
        EXPECT_LE(worst, 2e-6) << (with_inv ? "unnormalized rows times 1 / sum" : "normalized");
      }
    }
  }
}

TEST(CpuRowKernels, MaskedSoftmaxRowsOfMinusInfinityOrNaNGiveNaN) {
  for (VectorIsa isa : runnable_isas()) {
    SCOPED_TRACE(cpu::vector_isa_name(isa));
    std::vector<float> s = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                            1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    s[17 + 4] = NAN;  // row 1 holds a NaN
    std::vector<float> mask(17, 0.0f);
    std::vector<float> all_masked(17, -INFINITY);
    std::vector<float> rows = s;
    cpu::softmax_rows(isa, rows.data(), 2, 17, mask.data(), 0, 1);
    for (int k = 0; k < 17; ++k) {
      EXPECT_FALSE(std::isnan(rows[k]));
      EXPECT_TRUE(std::isnan(rows[17 + k])) << k;
    }
    cpu::softmax_rows(isa, rows.data() + 34, 1, 17, all_masked.data(), 0, 1);
    for (int k = 0; k < 17; ++k) EXPECT_TRUE(std::isnan(rows[34 + k])) << k;
  }
}

TEST(CpuRowKernels, SigmoidMatchesADoubleOracleOnEveryIsa) {
  // Both signs, around 0, large magnitudes (-87 and beyond, +90), infinities, NaN; lengths
  // with every tail of a 32-float block.
  std::vector<float> x;
  for (int i = 0; i < 997; ++i) x.push_back(-30.0f + 0.0613f * static_cast<float>(i));
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, -86.5f, -87.5f, -100.0f, 90.0f, 1e30f, -1e30f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (VectorIsa isa : runnable_isas())
    for (size_t n : {size_t{1}, size_t{15}, size_t{33}, x.size()}) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " n=" + std::to_string(n));
      std::vector<float> y(n, -1.0f);
      cpu::sigmoid(isa, x.data() + (x.size() - n), y.data(), static_cast<int64_t>(n));
      for (size_t k = 0; k < n; ++k) {
        const float v = x[x.size() - n + k];
        if (std::isnan(v)) {
          EXPECT_TRUE(std::isnan(y[k]));
          continue;
        }
        const double want = 1.0 / (1.0 + std::exp(-static_cast<double>(v)));
        EXPECT_NEAR(y[k], want, 4e-7 * want + 1e-37) << "x = " << v;
        EXPECT_GE(y[k], 0.0f);
        EXPECT_LE(y[k], 1.0f);
      }
    }
  // In place.
  std::vector<float> z = {-2.0f, 0.5f, 3.0f};
  cpu::sigmoid(cpu::best_vector_isa(), z.data(), z.data(), 3);
  EXPECT_NEAR(z[1], 1.0 / (1.0 + std::exp(-0.5)), 1e-7);
}

// A one-input element-wise kernel against its reference on `shapes` (seeded values in
// [-spread, spread)), without a pool and on two threads, within 1e-6 of the outputs' scale.
void expect_unary_matches(const NodeRunner& ref, const NodeRunner& cpu, const std::vector<Shape>& shapes,
                          float spread) {
  static ThreadPool pool2(2);
  ASSERT_TRUE(cpu.found());
  for (const Shape& s : shapes) {
    SCOPED_TRACE(shape_to_string(s));
    Tensor x = random_tensor(s, 7);
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] *= spread;
    auto want = ref.run({x});
    ASSERT_TRUE(want.ok());
    for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      auto got = cpu.run({x}, pool);
      ASSERT_TRUE(got.ok()) << got.status().to_string();
      expect_close(*got, *want, 1e-6);
    }
  }
}

TEST(CpuRowKernels, SigmoidKernelMatchesReferenceOnThreads) {
  NodeRunner ref("Sigmoid", "", 13, {}, Device::ref);
  NodeRunner cpu("Sigmoid", "", 13, {}, Device::cpu);
  expect_unary_matches(ref, cpu, {Shape{1, 1, 64, 70}, Shape{3}, Shape{}, Shape{0, 5}, Shape{2, 4097}}, 1.0f);
}

// Tanh and Exp against double oracles on every ISA: both signs, around 0 (tanh's series), the
// ranges where they saturate, overflow and underflow (exp's denormal results), infinities, NaN;
// lengths with every tail of a vector. Tanh within 1e-6 relative, Exp within 4 ulp (and the
// smallest denormal).
TEST(CpuRowKernels, TanhAndExpMatchDoubleOraclesOnEveryIsa) {
  std::vector<float> x;
  for (int i = 0; i < 997; ++i) x.push_back(-110.0f + 0.2003f * static_cast<float>(i));
  for (float v = 1e-9f; v < 5.0f; v *= 1.21f) x.push_back(v), x.push_back(-v);
  for (float v : {0.0f, -0.0f, 0.0624f, 0.0626f, 88.7f, 88.73f, -87.4f, -103.9f, -104.5f, 1e30f, -1e30f})
    x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(-std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (VectorIsa isa : runnable_isas())
    for (size_t n : {size_t{1}, size_t{15}, size_t{33}, x.size()}) {
      SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " n=" + std::to_string(n));
      const float* in = x.data() + (x.size() - n);
      std::vector<float> t(n), e(n);
      cpu::tanh_row(isa, in, t.data(), static_cast<int64_t>(n));
      cpu::exp_row(isa, in, e.data(), static_cast<int64_t>(n));
      for (size_t k = 0; k < n; ++k) {
        const double v = in[k];
        if (std::isnan(v)) {
          EXPECT_TRUE(std::isnan(t[k]) && std::isnan(e[k]));
          continue;
        }
        const double wt = std::tanh(v);
        EXPECT_NEAR(t[k], wt, 1e-6 * std::fabs(wt)) << "tanh(" << v << ")";
        const float we = static_cast<float>(std::exp(v));  // inf above the float range
        if (std::isinf(we)) {
          EXPECT_EQ(e[k], we) << "exp(" << v << ")";
        } else {
          EXPECT_NEAR(e[k], we, 4.8e-7 * we + 1.5e-45) << "exp(" << v << ")";
        }
      }
    }
}

TEST(CpuRowKernels, TanhAndExpKernelsMatchReferenceOnThreads) {
  for (const char* op : {"Tanh", "Exp"}) {
    SCOPED_TRACE(op);
    NodeRunner ref(op, "", 13, {}, Device::ref);
    NodeRunner cpu(op, "", 13, {}, Device::cpu);
    expect_unary_matches(ref, cpu, {Shape{1, 1, 64, 70}, Shape{3}, Shape{}, Shape{0, 5}, Shape{2, 4097}}, 4.0f);
  }
}

TEST(CpuRowKernels, GeluMatchesADoubleOracleOnEveryIsa) {
  // Both forms; both signs, around 0, the negative tail (down to where the result underflows),
  // large magnitudes, infinities, NaN; lengths with every tail of a vector.
  std::vector<float> x;
  for (int i = 0; i < 997; ++i) x.push_back(-14.0f + 0.0291f * static_cast<float>(i));
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 1e-30f, -20.0f, 30.0f, 1e30f, -1e30f}) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (bool tanh_form : {false, true})
    for (VectorIsa isa : runnable_isas())
      for (size_t n : {size_t{1}, size_t{15}, size_t{33}, x.size()}) {
        SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " n=" + std::to_string(n) +
                     (tanh_form ? " tanh" : " erf"));
        std::vector<float> y(n, -1.0f);
        cpu::gelu(isa, x.data() + (x.size() - n), y.data(), static_cast<int64_t>(n), tanh_form);
        for (size_t k = 0; k < n; ++k) {
          const double v = x[x.size() - n + k];
          if (std::isnan(v)) {
            EXPECT_TRUE(std::isnan(y[k]));
            continue;
          }
          // 1 + erf(z) as erfc(-z), and 1 + tanh(u) as 2 / (1 + e^-2u): no cancellation.
          const double u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
          const double want = tanh_form ? (std::isinf(v) ? v : v / (1.0 + std::exp(-2.0 * u)))
                                        : 0.5 * v * std::erfc(-v * 0.7071067811865476);
          if (std::isinf(v)) {
            EXPECT_EQ(y[k], v);
            continue;
          }
          // In the negative tail the exponential carries the float rounding of its argument
          // (z^2, or 2|u|): a relative error that grows with it.
          const double arg = tanh_form ? 2.0 * std::fabs(u) : 0.5 * v * v;
          const double tol = 8e-7 + 3e-7 * arg;
          EXPECT_NEAR(y[k], want, tol * std::fabs(want) + 1e-37) << "x = " << v;
        }
      }
  // -inf: NaN in the erf form (-inf * 0), as the reference's std::erf gives.
  const float ninf = -std::numeric_limits<float>::infinity();
  float y = 0;
  cpu::gelu(cpu::best_vector_isa(), &ninf, &y, 1, false);
  EXPECT_TRUE(std::isnan(y));
}

TEST(CpuRowKernels, FastGeluMatchesADoubleOracleAndRoundsToBf16OnEveryIsa) {
  // gelu_fast_inplace, the Gelu after a bf16-compute product: on floats the erf form is within
  // 1.5e-6 absolute (plus float rounding) of the exact Gelu and the tanh form is gelu()'s; on
  // bfloat16 bits each result is exactly the float result on the same value rounded to the
  // nearest even bfloat16. Inputs are bfloat16 values (both signs, the tails, large
  // magnitudes, +inf, NaN), lengths with every tail of a vector pair.
  std::vector<float> x;
  for (int i = 0; i < 1201; ++i) x.push_back(static_cast<float>(BFloat16(-12.0f + 0.02f * static_cast<float>(i))));
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, -20.0f, 30.0f, 1e30f, -1e30f}) x.push_back(static_cast<float>(BFloat16(v)));
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  for (bool tanh_form : {false, true})
    for (VectorIsa isa : runnable_isas())
      for (size_t n : {size_t{1}, size_t{15}, size_t{17}, size_t{31}, size_t{33}, size_t{63}, x.size()}) {
        SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " n=" + std::to_string(n) +
                     (tanh_form ? " tanh" : " erf"));
        const float* in = x.data() + (x.size() - n);
        std::vector<float> y(in, in + n), exact(n);
        cpu::gelu_fast_inplace(isa, y.data(), static_cast<int64_t>(n), false, tanh_form);
        cpu::gelu(isa, in, exact.data(), static_cast<int64_t>(n), tanh_form);
        std::vector<uint16_t> yb(n);
        for (size_t k = 0; k < n; ++k) yb[k] = BFloat16(in[k]).bits;
        cpu::gelu_fast_inplace(isa, yb.data(), static_cast<int64_t>(n), true, tanh_form);
        for (size_t k = 0; k < n; ++k) {
          const double v = in[k];
          if (std::isnan(v)) {
            EXPECT_TRUE(std::isnan(y[k]));
            EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16::to_float(yb[k]))));
            continue;
          }
          if (std::isinf(v)) {
            EXPECT_EQ(y[k], v);
          } else if (tanh_form) {
            EXPECT_EQ(y[k], exact[k]) << "x = " << v;
          } else {
            const double want = 0.5 * v * std::erfc(-v * 0.7071067811865476);
            EXPECT_NEAR(y[k], want, 1.5e-6 + 2.5e-7 * std::fabs(want)) << "x = " << v;
          }
          EXPECT_EQ(yb[k], BFloat16(y[k]).bits) << "x = " << v << ", float result " << y[k];
        }
      }
  // -inf: NaN in the erf form (-inf * 0), as the reference's std::erf gives.
  float ninf = -std::numeric_limits<float>::infinity();
  cpu::gelu_fast_inplace(cpu::best_vector_isa(), &ninf, 1, false, false);
  EXPECT_TRUE(std::isnan(ninf));
}

TEST(CpuRowKernels, GeluKernelMatchesReferenceOnFormsAndThreads) {
  for (const char* approx : {"none", "tanh"}) {
    const Attrs attrs = {{"approximate", string_attr(approx)}};
    NodeRunner ref("Gelu", "com.osprey", 1, attrs, Device::ref);
    NodeRunner cpu("Gelu", "com.osprey", 1, attrs, Device::cpu);
    SCOPED_TRACE(approx);
    expect_unary_matches(ref, cpu, {Shape{1, 128, 1536}, Shape{3}, Shape{}, Shape{0, 5}, Shape{2, 4097}}, 4.0f);
  }
  // A bad form is the reference's error, naming the attribute.
  NodeRunner cpu("Gelu", "com.osprey", 1, {{"approximate", string_attr("fast")}}, Device::cpu);
  auto r = cpu.run({random_tensor({4}, 1)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("approximate"), std::string::npos);
}

}  // namespace
}  // namespace osprey::testing
