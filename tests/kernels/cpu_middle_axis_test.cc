// The middle-axis kernels (Softmax / LogSoftmax along a middle axis, ReduceMax / ReduceMin,
// ArgMax / ArgMin, CumSum) against double oracles and the reference kernels: every ISA variant
// this CPU can run, column counts around the vector width, the block size and the column tile,
// work split at odd block boundaries, NaN, infinities, signed zeros and ties, one and two threads,
// and the forms handed to the reference.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cpu_test_harness.h"
#include "kernels/cpu/row_kernels.h"

namespace osprey::testing {
namespace {

using cpu::VectorIsa;

struct View {
  int64_t outer, n, inner;
};

std::string view_name(VectorIsa isa, const View& v) {
  return std::string(cpu::vector_isa_name(isa)) + " [" + std::to_string(v.outer) + "," +
         std::to_string(v.n) + "," + std::to_string(v.inner) + "]";
}

// Runs `fn(begin, end)` over all blocks in three uneven parts, as the threads would split them.
template <class Fn>
void in_three_parts(int64_t blocks, Fn fn) {
  const int64_t a = blocks / 3, b = blocks - blocks / 4;
  fn(0, a);
  fn(a, b);
  fn(b, blocks);
}

// Softmax (or LogSoftmax) of column (o, i) in double.
std::vector<double> softmax_oracle(const float* x, const View& v, int64_t o, int64_t i, bool log) {
  const float* col = x + o * v.n * v.inner + i;
  double mx = -INFINITY;
  for (int64_t j = 0; j < v.n; ++j) mx = std::max(mx, static_cast<double>(col[j * v.inner]));
  double sum = 0;
  for (int64_t j = 0; j < v.n; ++j) sum += std::exp(col[j * v.inner] - mx);
  std::vector<double> out;
  for (int64_t k = 0; k < v.n; ++k) {
    const double xk = col[k * v.inner];
    out.push_back(log ? xk - mx - std::log(sum) : std::exp(xk - mx) / sum);
  }
  return out;
}

TEST(CpuMiddleAxis, SoftmaxMatchesADoubleOracleOnEveryIsa) {
  const std::vector<View> views = {{1, 85, 6400}, {2, 3, 5},   {1, 1, 40},   {3, 7, 17},
                                   {1, 19, 513},  {2, 4, 1030}, {1, 1000, 16}, {5, 2, 2}};
  for (VectorIsa isa : runnable_isas()) {
    for (const View& v : views) {
      for (bool log : {false, true}) {
        SCOPED_TRACE(view_name(isa, v) + (log ? " log" : ""));
        Tensor x = random_tensor({v.outer, v.n, v.inner}, 13);
        for (int64_t i = 0; i < x.numel(); i += 11) x.data<float>()[i] *= 30.0f;  // wide range
        Tensor y(DType::kFloat32, x.shape());
        in_three_parts(v.outer * cpu::column_blocks(v.inner), [&](int64_t b, int64_t e) {
          cpu::softmax_middle_axis(isa, x.data<float>(), y.data<float>(), v.n, v.inner, b, e, log);
        });
        double worst = 0;
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < v.inner; ++i) {
            const std::vector<double> want = softmax_oracle(x.data<float>(), v, o, i, log);
            for (int64_t k = 0; k < v.n; ++k) {
              const double w = want[static_cast<size_t>(k)];
              const double got = y.data<float>()[(o * v.n + k) * v.inner + i];
              worst = std::max(worst, std::fabs(got - w) / std::max(1.0, std::fabs(w)));
            }
          }
        EXPECT_LE(worst, 2e-6);
      }
    }
  }
}

TEST(CpuMiddleAxis, SoftmaxInPlaceAndSpecialColumns) {
  // Column 0 holds a NaN, column 1 is all -inf, column 2 has a masked (-1e9) element, column 3
  // is ordinary; 20 columns so that the vector and the tail loops both see them.
  const View v = {1, 4, 20};
  const float inf = std::numeric_limits<float>::infinity();
  for (VectorIsa isa : runnable_isas()) {
    for (int64_t shift : {0, 16}) {  // the special columns in the first vector, or in the tail
      SCOPED_TRACE(view_name(isa, v) + " columns from " + std::to_string(shift));
      Tensor x = random_tensor({v.outer, v.n, v.inner}, 17);
      float* p = x.data<float>();
      p[2 * v.inner + shift] = std::nanf("");
      for (int64_t k = 0; k < v.n; ++k) p[k * v.inner + shift + 1] = -inf;
      p[v.inner + shift + 2] = -1e9f;
      const Tensor before = x.clone();
      cpu::softmax_middle_axis(isa, p, p, v.n, v.inner, 0, cpu::column_blocks(v.inner), false);
      for (int64_t k = 0; k < v.n; ++k) {
        EXPECT_TRUE(std::isnan(p[k * v.inner + shift])) << k;
        EXPECT_TRUE(std::isnan(p[k * v.inner + shift + 1])) << k;
      }
      EXPECT_EQ(p[v.inner + shift + 2], 0.0f);
      double sum = 0;
      const std::vector<double> want = softmax_oracle(before.data<float>(), v, 0, shift + 3, false);
      for (int64_t k = 0; k < v.n; ++k) {
        EXPECT_NEAR(p[k * v.inner + shift + 3], want[static_cast<size_t>(k)], 1e-6);
        sum += p[k * v.inner + shift + 3];
      }
      EXPECT_NEAR(sum, 1.0, 1e-6);
    }
  }
}

// The reference's order: an element replaces the running value where it is greater (less) or
// NaN.
float extreme_oracle(const float* col, int64_t r, int64_t stride, bool min) {
  float m = col[0];
  for (int64_t k = 1; k < r; ++k) {
    const float v = col[k * stride];
    if ((min ? v < m : v > m) || std::isnan(v)) m = v;
  }
  return m;
}

TEST(CpuMiddleAxis, ExtremeMatchesTheReferenceOrderBitForBitOnEveryIsa) {
  const std::vector<View> views = {{1, 128, 6400}, {2, 3, 5},  {1, 1, 40},  {3, 7, 17}, {1, 19, 513},
                                   {2, 4, 1030},   {3, 100, 1}, {2, 33, 1}, {4, 1, 1},  {1, 2000, 1}};
  const float inf = std::numeric_limits<float>::infinity();
  for (VectorIsa isa : runnable_isas()) {
    for (const View& v : views) {
      for (bool min : {false, true}) {
        SCOPED_TRACE(view_name(isa, v) + (min ? " min" : " max"));
        Tensor x = random_tensor({v.outer, v.n, v.inner}, 23);
        float* p = x.data<float>();
        // Signed zeros where they would win (every value of some columns or rows), infinities,
        // and a few NaNs with distinct payloads.
        for (int64_t i = 0; i < x.numel(); ++i) {
          if (i % 97 == 5) p[i] = std::bit_cast<float>(0x7fc00000u + static_cast<uint32_t>(i % 7));
          else if (i % 53 == 3) p[i] = min ? inf : -inf;
        }
        const int64_t zero_col = v.inner > 2 ? 2 : 0;  // with inner 1: all of row 0
        for (int64_t k = 0; k < v.n; ++k)
          p[k * v.inner + zero_col] = (k % 3 == 1) ? -0.0f : (k % 3 == 2 ? 0.0f : (min ? 1.0f : -1.0f));
        Tensor y(DType::kFloat32, {v.outer, v.inner});
        in_three_parts(v.outer * cpu::column_blocks(v.inner), [&](int64_t b, int64_t e) {
          cpu::extreme_middle_axis(isa, p, y.data<float>(), v.n, v.inner, b, e, min);
        });
        int64_t wrong = 0;
        for (int64_t o = 0; o < v.outer; ++o)
          for (int64_t i = 0; i < v.inner; ++i) {
            const float want = extreme_oracle(p + o * v.n * v.inner + i, v.n, v.inner, min);
            const float got = y.data<float>()[o * v.inner + i];
            wrong += std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(want);
          }
        EXPECT_EQ(wrong, 0);
      }
    }
  }
}

TEST(CpuMiddleAxis, ReduceMaxAndMinMatchTheReferenceBitForBitOnAxesOpsetsAndThreads) {
  struct Case {
    Shape shape;
    std::vector<int64_t> axes;  // empty: all axes
    int64_t keepdims;
  };
  const std::vector<Case> cases = {
      {{1, 128, 20, 20}, {1}, 1},   {{1, 128, 384}, {1}, 0},      {{3, 1000}, {-1}, 1},
      {{2, 3, 4}, {}, 0},           {{2, 1, 3, 1, 4}, {1, 2}, 1}, {{2, 3, 4, 5}, {0, 2}, 1},
      {{2, 600, 3}, {0}, 0},        {{4, 5, 6}, {2, 1}, 1},       {{1, 1, 1}, {1}, 0}};
  ThreadPool pool2(2);
  for (const char* op : {"ReduceMax", "ReduceMin"}) {
    for (int opset : {13, 18}) {
      for (const auto& c : cases) {
        SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset) + " " +
                     shape_to_string(c.shape) + " keepdims " + std::to_string(c.keepdims));
        Attrs attrs = {{"keepdims", int_attr(c.keepdims)}};
        if (opset < 18 && !c.axes.empty()) attrs["axes"] = ints_attr(c.axes);
        Tensor x = random_tensor(c.shape, 37);
        for (int64_t i = 0; i < x.numel(); i += 29) x.data<float>()[i] = i % 2 ? -0.0f : std::nanf("");
        std::vector<Tensor> inputs = {x};
        if (opset >= 18 && !c.axes.empty()) inputs.push_back(vec<int64_t>(c.axes));
        NodeRunner ref(op, "", opset, attrs, Device::ref);
        NodeRunner fast(op, "", opset, attrs, Device::cpu);
        expect_same_as_reference(ref, fast, inputs, &pool2);
      }
    }
  }
}

TEST(CpuMiddleAxis, ReduceMaxIdentityEmptyAndBadAxesGoThroughTheReference) {
  const Tensor x = random_tensor({2, 3}, 41);
  NodeRunner noop("ReduceMax", "", 18, {{"noop_with_empty_axes", int_attr(1)}}, Device::cpu);
  auto same = noop.run({x});
  ASSERT_TRUE(same.ok()) << same.status().to_string();
  EXPECT_TRUE(bit_equal(*same, x));
  NodeRunner ref_empty("ReduceMin", "", 13, {{"axes", ints_attr({1})}}, Device::ref);
  NodeRunner empty("ReduceMin", "", 13, {{"axes", ints_attr({1})}}, Device::cpu);
  ThreadPool pool2(2);
  expect_same_as_reference(ref_empty, empty, {Tensor(DType::kFloat32, {2, 0, 3})}, &pool2);
  NodeRunner bad("ReduceMax", "", 13, {{"axes", ints_attr({3})}}, Device::cpu);
  auto r = bad.run({x});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("axes"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing

namespace osprey::testing {
namespace {

// The reference's order for one column: NaN counts as the extreme; ties go to the first index
// (the last with `last`).
int64_t arg_oracle(const float* col, int64_t r, int64_t stride, bool min, bool last) {
  int64_t best = 0;
  float bv = col[0];
  for (int64_t k = 1; k < r; ++k) {
    const float v = col[k * stride];
    const bool vnan = std::isnan(v), bnan = std::isnan(bv);
    bool better, equal;
    if (vnan || bnan) {
      better = vnan && !bnan;
      equal = vnan && bnan;
    } else {
      better = min ? v < bv : v > bv;
      equal = v == bv;
    }
    if (better || (last && equal)) {
      best = k;
      bv = v;
    }
  }
  return best;
}

TEST(CpuMiddleAxis, ArgExtremeMatchesTheReferenceOrderOnEveryIsa) {
  const std::vector<View> views = {{1, 80, 840}, {2, 3, 5},  {1, 1, 40},  {3, 7, 17},  {1, 19, 513},
                                   {2, 4, 1030}, {3, 100, 1}, {2, 33, 1}, {4, 1, 1}, {1, 2000, 1}};
  const float inf = std::numeric_limits<float>::infinity();
  for (VectorIsa isa : runnable_isas()) {
    for (const View& v : views) {
      for (bool min : {false, true}) {
        for (bool last : {false, true}) {
          SCOPED_TRACE(view_name(isa, v) + (min ? " min" : " max") + (last ? " last" : " first"));
          Tensor x = random_tensor({v.outer, v.n, v.inner}, 29);
          float* p = x.data<float>();
          // Coarse values make ties; some NaNs and infinities; one column (row) of signed zeros
          // and the opposite infinity, one of NaNs only.
          for (int64_t i = 0; i < x.numel(); ++i) {
            p[i] = std::round(p[i] * 4.0f);
            if (i % 101 == 5) p[i] = std::nanf("");
            else if (i % 59 == 3) p[i] = min ? -inf : inf;
          }
          const int64_t zero_col = v.inner > 2 ? 2 : 0;
          for (int64_t k = 0; k < v.n; ++k) {
            p[k * v.inner + zero_col] = k % 2 ? -0.0f : (k % 3 ? 0.0f : (min ? inf : -inf));
            if (v.inner > 3) p[k * v.inner + 3] = std::nanf("");
          }
          std::vector<int64_t> y(static_cast<size_t>(v.outer * v.inner), -7);
          in_three_parts(v.outer * cpu::column_blocks(v.inner), [&](int64_t b, int64_t e) {
            cpu::arg_extreme_middle_axis(isa, p, y.data(), v.n, v.inner, b, e, min, last);
          });
          int64_t wrong = 0;
          for (int64_t o = 0; o < v.outer; ++o)
            for (int64_t i = 0; i < v.inner; ++i)
              wrong += y[static_cast<size_t>(o * v.inner + i)] !=
                       arg_oracle(p + o * v.n * v.inner + i, v.n, v.inner, min, last);
          EXPECT_EQ(wrong, 0);
        }
      }
    }
  }
}

TEST(CpuMiddleAxis, ArgMaxAndArgMinMatchTheReferenceOnAxesKeepdimsOpsetsAndThreads) {
  struct Case {
    Shape shape;
    int64_t axis, keepdims;
  };
  const std::vector<Case> cases = {{{1, 80, 20, 21}, 1, 1}, {{4, 1000}, -1, 0}, {{2, 3, 4}, 0, 1},
                                   {{2, 3, 4}, 2, 0},       {{5}, 0, 1},         {{3, 1, 7}, 1, 0}};
  ThreadPool pool2(2);
  for (const char* op : {"ArgMax", "ArgMin"}) {
    for (int opset : {11, 13}) {
      for (int64_t last : {0, 1}) {
        if (opset < 12 && last) continue;
        for (const auto& c : cases) {
          SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset) + " " + shape_to_string(c.shape) +
                       " axis " + std::to_string(c.axis) + " last " + std::to_string(last));
          Attrs attrs = {{"axis", int_attr(c.axis)}, {"keepdims", int_attr(c.keepdims)}};
          if (opset >= 12) attrs["select_last_index"] = int_attr(last);
          Tensor x = random_tensor(c.shape, 43);
          for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::round(x.data<float>()[i] * 3.0f);
          NodeRunner ref(op, "", opset, attrs, Device::ref);
          NodeRunner fast(op, "", opset, attrs, Device::cpu);
          expect_same_as_reference(ref, fast, {x}, &pool2);
        }
      }
    }
  }
  NodeRunner empty_ref("ArgMax", "", 13, {{"axis", int_attr(1)}}, Device::ref);
  NodeRunner empty("ArgMax", "", 13, {{"axis", int_attr(1)}}, Device::cpu);
  auto want = empty_ref.run({Tensor(DType::kFloat32, {2, 0, 3})});
  auto got = empty.run({Tensor(DType::kFloat32, {2, 0, 3})});
  ASSERT_FALSE(want.ok());
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().message(), want.status().message());
  NodeRunner bad("ArgMax", "", 13, {{"axis", int_attr(3)}}, Device::cpu);
  auto r = bad.run({random_tensor({2, 3}, 1)});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("axis"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing

namespace osprey::testing {
namespace {

TEST(CpuMiddleAxis, CumSumMatchesTheReferenceBitForBitOnEveryIsa) {
  const std::vector<View> views = {{1, 128, 640}, {2, 3, 5}, {3, 7, 17}, {1, 19, 513}, {2, 4, 1030}, {1, 1, 40}};
  for (VectorIsa isa : runnable_isas()) {
    for (const View& v : views) {
      for (int form = 0; form < 4; ++form) {
        const bool exclusive = form & 1, reverse = form & 2;
        SCOPED_TRACE(view_name(isa, v) + " exclusive " + std::to_string(exclusive) + " reverse " + std::to_string(reverse));
        const Tensor x = awkward_tensor({v.outer, v.n, v.inner}, 31);
        Tensor y(DType::kFloat32, x.shape());
        in_three_parts(v.outer * cpu::column_blocks(v.inner), [&](int64_t b, int64_t e) {
          cpu::cumsum_middle_axis(isa, x.data<float>(), y.data<float>(), v.n, v.inner, b, e, exclusive, reverse);
        });
        auto want = run_single("CumSum", 14, {x, vec<int64_t>({1})},
                               {{"exclusive", int_attr(exclusive)}, {"reverse", int_attr(reverse)}});
        ASSERT_TRUE(want.ok()) << want.status().to_string();
        EXPECT_TRUE(same_bytes(y, *want));
      }
    }
  }
}

TEST(CpuMiddleAxis, CumSumNodeMatchesTheReferenceOnAxesAndThreads) {
  ThreadPool pool2(2);
  for (int64_t axis : {0, 1, -2, 2}) {
    for (DType axis_type : {DType::kInt64, DType::kInt32}) {
      SCOPED_TRACE("axis " + std::to_string(axis));
      const Tensor x = random_tensor({3, 40, 33}, 5);
      const Tensor ax = axis_type == DType::kInt64 ? vec<int64_t>({axis}) : vec<int32_t>({static_cast<int32_t>(axis)});
      NodeRunner ref("CumSum", "", 14, {{"reverse", int_attr(1)}}, Device::ref);
      NodeRunner fast("CumSum", "", 14, {{"reverse", int_attr(1)}}, Device::cpu);
      expect_same_as_reference(ref, fast, {x, ax}, &pool2);
    }
  }
  NodeRunner bad("CumSum", "", 14, {}, Device::cpu);
  auto r = bad.run({random_tensor({3, 4}, 1), vec<int64_t>({5})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("axis"), std::string::npos) << r.status().to_string();
}

}  // namespace
}  // namespace osprey::testing
