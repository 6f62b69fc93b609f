// matmul_core's choice of primitive for a constant B and the products it runs: in bf16 on AMX
// the product runs as a 1x1 convolution (B packed once as its weights), elsewhere in bf16 as a
// matmul; in float32 with AVX-512 on panel_product (no activation, or Gelu), else a widening B
// (N >= K) runs as the convolution; either way the result is the float product (within bf16
// rounding), for every row count the first product's decision has to serve.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/matmul_core.h"
#include "kernel_harness.h"

namespace osprey {
namespace {

// n values uniform in [-1, 1) (kernel_harness.h's generator).
std::vector<float> random_values(size_t n, unsigned seed) {
  const Tensor t = testing::random_tensor({static_cast<int64_t>(n)}, seed);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

// Y = alpha * A B + bias (+ beta * Y as it was), in double.
std::vector<double> oracle(const std::vector<float>& a, const std::vector<float>& b,
                           const std::vector<float>& bias, const std::vector<float>& y0,
                           const cpu::Product2D& p) {
  std::vector<double> y(static_cast<size_t>(p.M * p.N));
  for (int64_t i = 0; i < p.M; ++i)
    for (int64_t j = 0; j < p.N; ++j) {
      double s = 0;
      for (int64_t k = 0; k < p.K; ++k)
        s += static_cast<double>(a[static_cast<size_t>(p.trans_a ? k * p.M + i : i * p.K + k)]) *
             b[static_cast<size_t>(p.trans_b ? j * p.K + k : k * p.N + j)];
      const size_t o = static_cast<size_t>(i * p.N + j);
      y[o] = p.alpha * s + (p.has_bias ? bias[static_cast<size_t>(j)] : 0.0) + p.beta * y0[o];
    }
  return y;
}

void expect_product(cpu::MatMulState& st, const Tensor& weights, cpu::Product2D p, unsigned seed,
                    int threads = 1) {
  const auto a = random_values(static_cast<size_t>(p.M * p.K), seed);
  const auto bias = random_values(static_cast<size_t>(p.N), seed + 1);
  const auto y0 = random_values(static_cast<size_t>(p.M * p.N), seed + 2);
  std::vector<float> y = y0;
  const Status s = cpu::run_product(st, p, threads, weights, a.data(), weights.data<float>(),
                                    p.has_bias ? bias.data() : nullptr, y.data());
  ASSERT_TRUE(s.ok()) << s.to_string();
  const auto want = oracle(a, std::vector<float>(weights.data<float>(), weights.data<float>() + weights.numel()),
                           bias, y0, p);
  double worst = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    worst = std::max(worst, std::fabs(y[i] - want[i]));
    scale = std::max(scale, std::fabs(want[i]));
  }
  if (st.bf16) {
    // bf16 operands: relative rounding 2^-9 per factor, sums of K terms of |a b| <= 1.
    EXPECT_LT(worst, 4e-3 * std::sqrt(static_cast<double>(p.K)) + 1e-2) << "M=" << p.M << " beta=" << p.beta << " trans_b=" << p.trans_b;
    EXPECT_GT(worst, 1e-5) << "M=" << p.M << ": the bf16 product equals the float one";
  } else {
    EXPECT_LT(worst, 1e-4) << "M=" << p.M << " N=" << p.N << " beta=" << p.beta << " trans_b=" << p.trans_b;
  }
  EXPECT_GT(scale, 0.1);
}

TEST(CpuMatMulCore, Bf16ConstantBRunsAsAConvolutionOnAmxOnly) {
  if (!cpu::bf16_compute_available()) GTEST_SKIP() << "no native bf16 on this CPU";
  const bool amx = cpu::bf16_probe_implementation().find("amx") != std::string::npos;
  for (const bool trans_b : {false, true}) {
    const int64_t K = 96, N = 80;
    Tensor w(DType::kFloat32, {trans_b ? N : K, trans_b ? K : N});
    const auto wv = random_values(static_cast<size_t>(K * N), 7);
    std::copy(wv.begin(), wv.end(), w.data<float>());  // [K, N], or [N, K] when transposed
    cpu::MatMulState st;
    st.bf16 = true;
    st.weights = w;
    st.weights_data = w.raw_data();
    ASSERT_TRUE(cpu::prepack_weights(st, trans_b, 1).ok());
    EXPECT_EQ(st.packed_as_conv, amx ? 1 : 0) << cpu::bf16_probe_implementation();
    // Row counts around AMX's 16- and 32-row blocks, with and without bias, a sum and alpha.
    unsigned seed = 100;
    for (const int64_t M : {1, 7, 16, 33, 128}) {
      cpu::Product2D p;
      p.M = M, p.K = K, p.N = N, p.trans_b = trans_b, p.has_bias = M % 2 == 1;
      expect_product(st, w, p, seed += 10);
      p.beta = 1.0f, p.alpha = p.has_bias ? 1.0f : 0.5f;  // callers scale only bias-free products
      expect_product(st, w, p, seed += 10);
    }
  }
}

TEST(CpuMatMulCore, Float32WideningBRunsAsAConvolutionOnAvx512) {
  // With AVX-512 and an activation panel_product does not take (a Clip, wide enough to change
  // nothing here), oneDNN's float32 matmul is brgemm-based: a constant B with N >= K is packed as
  // a 1x1 convolution's weights (decided at 128 rows), a narrowing one stays a matmul. Without
  // AVX-512 (a gemm-based matmul) the older rule decides; the products are checked either way.
  for (const bool widening : {true, false}) {
    for (const bool trans_b : {false, true}) {
      const int64_t K = widening ? 96 : 160, N = widening ? 160 : 96;
      Tensor w(DType::kFloat32, {trans_b ? N : K, trans_b ? K : N});
      const auto wv = random_values(static_cast<size_t>(K * N), 11);
      std::copy(wv.begin(), wv.end(), w.data<float>());
      cpu::MatMulState st;
      st.act.name = "Clip";
      st.act.params = {-1e30f, 1e30f};
      st.weights = w;
      st.weights_data = w.raw_data();
      ASSERT_TRUE(cpu::prepack_weights(st, trans_b, 1).ok());
      EXPECT_EQ(st.panel.data, nullptr);
      if (cpu::avx512_kernels_available()) {
        EXPECT_EQ(st.packed_as_conv, widening ? 1 : 0) << "K=" << K << " N=" << N;
      }
      unsigned seed = 300;
      for (const int64_t M : {1, 7, 33, 128}) {
        cpu::Product2D p;
        p.M = M, p.K = K, p.N = N, p.trans_b = trans_b, p.has_bias = M % 2 == 1;
        expect_product(st, w, p, seed += 10);
        p.beta = 1.0f, p.alpha = p.has_bias ? 1.0f : 0.5f;
        expect_product(st, w, p, seed += 10);
      }
    }
  }
}

TEST(CpuMatMulCore, Float32ConstantBRunsOnPanelsOnAvx512) {
  // No activation (or a Gelu, applied after the product): a float32 constant B is packed for
  // panel_product on AVX-512, oneDNN's packed forms stay empty. Awkward sizes: K not a multiple
  // of 4 and over one block of 768 rows (three blocks of 567), N not a multiple of the 48-column
  // panel, row counts off the 8-row tile, a transposed A, alpha, a sum, two threads.
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const std::string act : {"", "Gelu"}) {
    for (const bool trans_b : {false, true}) {
      for (const auto& [K, N] : std::vector<std::pair<int64_t, int64_t>>{{1701, 100}, {33, 5}, {64, 48}}) {
        Tensor w(DType::kFloat32, {trans_b ? N : K, trans_b ? K : N});
        const auto wv = random_values(static_cast<size_t>(K * N), 17);
        std::copy(wv.begin(), wv.end(), w.data<float>());
        cpu::MatMulState st;
        st.act.name = act;
        st.weights = w;
        st.weights_data = w.raw_data();
        ASSERT_TRUE(cpu::prepack_weights(st, trans_b, 1).ok());
        ASSERT_NE(st.panel.data, nullptr) << "K=" << K << " N=" << N;
        EXPECT_TRUE(st.packed.empty());
        EXPECT_TRUE(st.holds_constant(1));
        unsigned seed = 500;
        for (const int64_t M : {1, 7, 8, 9, 37}) {
          for (const int threads : {1, 2}) {
            cpu::Product2D p;
            p.M = M, p.K = K, p.N = N, p.trans_b = trans_b, p.has_bias = M % 2 == 1;
            p.trans_a = M == 9;
            expect_product(st, w, p, seed += 10, threads);
            p.beta = 1.0f, p.alpha = p.has_bias ? 1.0f : 0.5f;
            expect_product(st, w, p, seed += 10, threads);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace osprey
