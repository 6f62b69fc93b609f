// Unit tests for the nn reference kernels: the shared GEMM core against a naive product,
// Conv / ConvTranspose / MatMul against direct loops on shapes the ONNX node cases do not
// cover (groups, dilations, 1-D and 3-D, batch broadcasting), and rejection of bad inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_harness.h"
#include "kernels/reference/gemm_core.h"

namespace osprey {
namespace {

using namespace osprey::testing;

// The nn tests have always run with a larger element limit than the other kernel tests.
constexpr int64_t kNnMaxElements = int64_t{1} << 24;

// Runs the reference kernel of `op`; returns all outputs.
Result<std::vector<Tensor>> run_nn(const std::string& op, int opset,
                                   const std::vector<Tensor>& inputs, const Attrs& attrs = {},
                                   int num_outputs = 1) {
  return run_kernel(op, opset, inputs, attrs, num_outputs, "", kNnMaxElements);
}

template <class T>
void check_gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, T beta) {
  const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
  std::vector<T> A((ta ? K : M) * lda), B((tb ? N : K) * ldb), C(M * ldc), R;
  std::mt19937 gen(static_cast<uint32_t>(M * 131 + N * 7 + K));
  std::uniform_int_distribution<int> dist(-4, 4);
  for (auto& v : A) v = static_cast<T>(dist(gen));
  for (auto& v : B) v = static_cast<T>(dist(gen));
  for (auto& v : C) v = static_cast<T>(dist(gen));
  R = C;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T s = 0;
      for (int64_t k = 0; k < K; ++k)
        s += (ta ? A[k * lda + i] : A[i * lda + k]) * (tb ? B[j * ldb + k] : B[k * ldb + j]);
      R[i * ldc + j] = alpha * s + (beta == T(0) ? T(0) : beta * C[i * ldc + j]);
    }
  ref::gemm<T>(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j)
      ASSERT_EQ(C[i * ldc + j], R[i * ldc + j]) << "M=" << M << " N=" << N << " K=" << K
                                                << " ta=" << ta << " tb=" << tb;
}

TEST(GemmCore, MatchesNaiveProduct) {
  // Small integers keep float sums exact; sizes straddle the micro-tile and block edges.
  const int64_t sizes[][3] = {{1, 1, 1}, {7, 9, 5}, {6, 8, 256}, {13, 17, 300}, {100, 530, 19},
                              {97, 3, 520}, {2, 1, 0}};
  for (auto& s : sizes)
    for (int t = 0; t < 4; ++t) {
      check_gemm<float>(t & 1, t & 2, s[0], s[1], s[2], 1.0f, 0.0f);
      check_gemm<double>(t & 1, t & 2, s[0], s[1], s[2], 2.0, 0.5);
      check_gemm<int32_t>(t & 1, t & 2, s[0], s[1], s[2], 1, 1);
      check_gemm<int64_t>(t & 1, t & 2, s[0], s[1], s[2], -1, 2);
    }
}

TEST(GemmCore, BetaZeroIgnoresNaN) {
  float c = std::nanf(""), a = 2, b = 3;
  ref::gemm<float>(false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
  EXPECT_EQ(c, 6.0f);
}

// Direct N-D convolution (NC + spatial), pads given as begin..., end....
std::vector<double> naive_conv(const Tensor& x, const Tensor& w, int64_t group,
                               const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dil, const std::vector<int64_t>& pads,
                               Shape* out_shape) {
  const size_t nd = static_cast<size_t>(x.rank() - 2);
  const int64_t N = x.dim(0), C = x.dim(1), M = w.dim(0), Cg = C / group, Mg = M / group;
  Shape out{N, M};
  for (size_t d = 0; d < nd; ++d)
    out.push_back((x.dim(2 + d) + pads[d] + pads[d + nd] - (w.dim(2 + d) - 1) * dil[d] - 1) /
                      strides[d] + 1);
  *out_shape = out;
  std::vector<double> y(static_cast<size_t>(shape_numel(out)), 0.0);
  std::vector<int64_t> o(nd + 2, 0), k(nd, 0);
  for (size_t yi = 0; yi < y.size(); ++yi) {
    int64_t rem = static_cast<int64_t>(yi);
    for (size_t d = nd + 2; d-- > 0;) o[d] = rem % out[d], rem /= out[d];
    const int64_t n = o[0], m = o[1], g = m / Mg;
    double s = 0;
    for (int64_t c = 0; c < Cg; ++c) {
      const int64_t kn = shape_numel(Shape(w.shape().begin() + 2, w.shape().end()));
      for (int64_t kf = 0; kf < kn; ++kf) {
        int64_t kr = kf, xoff = n * C + g * Cg + c;
        bool inside = true;
        for (size_t d = nd; d-- > 0;) k[d] = kr % w.dim(2 + d), kr /= w.dim(2 + d);
        for (size_t d = 0; d < nd; ++d) {
          const int64_t p = o[2 + d] * strides[d] - pads[d] + k[d] * dil[d];
          inside = inside && p >= 0 && p < x.dim(2 + d);
          xoff = xoff * x.dim(2 + d) + p;
        }
        if (inside) s += x.data<float>()[xoff] * w.data<float>()[(m * Cg + c) * kn + kf];
      }
    }
    y[yi] = s;
  }
  return y;
}

TEST(NnKernels, ConvMatchesDirectLoops) {
  struct Case {
    Shape x, w;
    int64_t group;
    std::vector<int64_t> strides, dil, pads;
  };
  const Case cases[] = {
      {{2, 4, 9}, {6, 2, 3}, 2, {2}, {2}, {1, 3}},                          // 1-D, groups
      {{1, 3, 8, 7}, {4, 3, 3, 2}, 1, {1, 2}, {2, 1}, {0, 1, 2, 0}},        // 2-D, asymmetric
      {{1, 4, 5, 5}, {4, 1, 3, 3}, 4, {1, 1}, {1, 1}, {1, 1, 1, 1}},        // depthwise
      {{1, 8, 6, 6}, {5, 8, 1, 1}, 1, {1, 1}, {1, 1}, {0, 0, 0, 0}},        // 1x1 direct
      {{1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, 1, {1, 2, 1}, {1, 1, 2}, {1, 0, 1, 0, 1, 1}},  // 3-D
  };
  uint32_t seed = 1;
  for (const auto& c : cases) {
    Tensor x = random_tensor(c.x, seed++), w = random_tensor(c.w, seed++);
    Shape out;
    const auto want = naive_conv(x, w, c.group, c.strides, c.dil, c.pads, &out);
    auto r = run_nn("Conv", 11, {x, w},
                    {{"group", int_attr(c.group)},
                     {"strides", ints_attr(c.strides)},
                     {"dilations", ints_attr(c.dil)},
                     {"pads", ints_attr(c.pads)}});
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ((*r)[0].shape(), out);
    expect_near((*r)[0], want, 1e-4);
  }
}

TEST(NnKernels, ConvTransposeIsAdjointOfConv) {
  // <conv(x, w), y> == <x, conv_transpose(y, w)> for matching geometry.
  const Shape xs{1, 4, 7, 6}, ws{4, 3, 3, 2};  // Conv: 4 -> 6 channels with group 2
  Tensor x = random_tensor(xs, 11), w = random_tensor({6, 2, 3, 2}, 12);
  Attrs a{{"group", int_attr(2)}, {"strides", ints_attr({2, 1})}, {"dilations", ints_attr({1, 2})},
          {"pads", ints_attr({1, 0, 0, 1})}};
  auto cy = run_nn("Conv", 11, {x, w}, a);
  ASSERT_TRUE(cy.ok()) << cy.status().to_string();
  Tensor y = random_tensor((*cy)[0].shape(), 13);
  // ConvTranspose weights are [C_in_of_transpose = 6, M/group = 2, k...]: same buffer.
  Attrs ta = a;
  ta["output_padding"] = ints_attr({1, 0});  // conv dropped one row of the input
  auto tx = run_nn("ConvTranspose", 11, {y, w}, ta);
  ASSERT_TRUE(tx.ok()) << tx.status().to_string();
  ASSERT_EQ((*tx)[0].shape(), xs);
  double lhs = 0, rhs = 0;
  for (int64_t i = 0; i < y.numel(); ++i) lhs += (*cy)[0].data<float>()[i] * y.data<float>()[i];
  for (int64_t i = 0; i < x.numel(); ++i) rhs += x.data<float>()[i] * (*tx)[0].data<float>()[i];
  EXPECT_NEAR(lhs, rhs, 1e-3);
  (void)ws;
}

TEST(NnKernels, MatMulBroadcastsBatchAndVectors) {
  Tensor a = random_tensor({2, 1, 3, 4}, 21), b = random_tensor({3, 4, 5}, 22);
  auto r = run_nn("MatMul", 13, {a, b});
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_EQ((*r)[0].shape(), (Shape{2, 3, 3, 5}));
  std::vector<double> want;
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t m = 0; m < 3; ++m)
        for (int64_t n = 0; n < 5; ++n) {
          double s = 0;
          for (int64_t k = 0; k < 4; ++k)
            s += a.data<float>()[(i * 3 + m) * 4 + k] * b.data<float>()[(j * 4 + k) * 5 + n];
          want.push_back(s);
        }
  expect_near((*r)[0], want, 1e-4);
  auto v = run_nn("MatMul", 13, {random_tensor({4}, 1), random_tensor({4}, 2)});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ((*v)[0].rank(), 0);
}

TEST(NnKernels, MaxPoolColumnMajorIndices) {
  Tensor x(DType::kFloat32, {1, 1, 2, 3});
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = static_cast<float>(i);
  auto r = run_nn("MaxPool", 12, {x},
                  {{"kernel_shape", ints_attr({2, 2})}, {"storage_order", int_attr(1)}}, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  // Maxima at (1,1) and (1,2): column-major offsets 1 + 1*2 = 3 and 1 + 2*2 = 5.
  EXPECT_EQ((*r)[1].data<int64_t>()[0], 3);
  EXPECT_EQ((*r)[1].data<int64_t>()[1], 5);
}

TEST(NnKernels, RejectsBadInputs) {
  Tensor x = random_tensor({1, 3, 5, 5}, 1);
  EXPECT_FALSE(run_nn("Conv", 11, {x, random_tensor({2, 2, 3, 3}, 2)}).ok());  // channels
  EXPECT_FALSE(run_nn("Conv", 11, {x, random_tensor({2, 3, 7, 7}, 2)}).ok());  // kernel > input
  EXPECT_FALSE(run_nn("Conv", 11, {x, random_tensor({2, 3, 3, 3}, 2), random_tensor({3}, 3)}).ok());
  EXPECT_FALSE(
      run_nn("Conv", 11, {x, random_tensor({2, 3, 3, 3}, 2)}, {{"strides", ints_attr({0, 1})}})
          .ok());
  EXPECT_FALSE(run_nn("Gemm", 13, {random_tensor({2, 3}, 1), random_tensor({2, 3}, 2)}).ok());
  EXPECT_FALSE(run_nn("MatMul", 13, {random_tensor({2, 3}, 1), random_tensor({4, 3}, 2)}).ok());
  EXPECT_FALSE(run_nn("MaxPool", 12, {x}).ok());  // no kernel_shape
  Tensor idx(DType::kInt64, {1, 1, 1, 1});
  idx.data<int64_t>()[0] = 99;
  EXPECT_FALSE(run_nn("MaxUnpool", 11, {random_tensor({1, 1, 1, 1}, 1), idx},
                      {{"kernel_shape", ints_attr({2, 2})}})
                   .ok());
  Tensor lens(DType::kInt32, {1});
  lens.data<int32_t>()[0] = 5;  // longer than the sequence
  EXPECT_FALSE(run_nn("RNN", 14,
                      {random_tensor({2, 1, 3}, 1), random_tensor({1, 4, 3}, 2),
                       random_tensor({1, 4, 4}, 3), Tensor(), lens},
                      {{"hidden_size", int_attr(4)}})
                   .ok());
}

}  // namespace
}  // namespace osprey
