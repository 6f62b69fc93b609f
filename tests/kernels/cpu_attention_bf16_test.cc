// The attention's bfloat16 products (kernels/cpu/attention_bf16.h) against a double loop over
// the operands rounded to bfloat16 as the kernels round them: the pair packing of B and B^T
// (odd k, columns off the 16-column panels, the scale), A's pair rows, and products over every
// tail tile with strided A and C, C's neighbours untouched and a row scale. Skipped (with the
// reason) on CPUs without avx512_bf16, where fast mode is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/attention_bf16.h"
#include "threading/cpu_info.h"
#include "kernel_harness.h"

namespace osprey::testing {
namespace {

// n values in [-2, 2).
std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::vector<float> v = values<float>(random_tensor({static_cast<int64_t>(n)}, seed));
  for (float& x : v) x *= 2.0f;
  return v;
}

// The two bfloat16 halves of a pair word, as floats.
float low_of(uint32_t w) {
  const uint32_t u = w << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float high_of(uint32_t w) {
  const uint32_t u = w & 0xffff0000u;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(CpuAttentionBf16, RoundToBf16IsNearestEven) {
  EXPECT_EQ(cpu::round_to_bf16(1.0f), 1.0f);
  EXPECT_EQ(cpu::round_to_bf16(1.0f + 1.0f / 256), 1.0f);               // tie -> even (down)
  EXPECT_EQ(cpu::round_to_bf16(1.0f + 3.0f / 256), 1.0f + 4.0f / 256);  // tie -> even (up)
  EXPECT_EQ(cpu::round_to_bf16(1.0f + 1.5f / 256), 1.0f + 2.0f / 256);  // above the tie
  EXPECT_TRUE(std::isnan(cpu::round_to_bf16(std::nanf(""))));
  EXPECT_EQ(cpu::round_to_bf16(-3.0f), -3.0f);
}

TEST(CpuAttentionBf16, PackPairsLaysOutRoundedPairsAndZeroPads) {
  if (!cpu::attention_bf16_available()) GTEST_SKIP() << "no avx512_bf16 on this CPU";
  for (int64_t k : {1, 5, 64, 131}) {
    for (int64_t n : {3, 16, 18, 40}) {
      const int64_t ldp = n + 3, ldt = k + 2;
      const std::vector<float> plain = random_floats(static_cast<size_t>(k * ldp), 11);
      std::vector<float> trans(static_cast<size_t>(n * ldt));
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) trans[j * ldt + p] = plain[p * ldp + j];
      const int64_t kw = (k + 1) / 2, cols = (n + 15) / 16 * 16;
      ASSERT_EQ(cpu::pair_panel_words(k, n), kw * cols);
      for (bool transposed : {false, true}) {
        SCOPED_TRACE("k " + std::to_string(k) + " n " + std::to_string(n) + " transposed " +
                     std::to_string(transposed));
        std::vector<uint32_t> dst(static_cast<size_t>(kw * cols), 0xdeadbeefu);
        cpu::pack_pairs_bf16(transposed ? trans.data() : plain.data(), transposed ? ldt : ldp,
                             transposed, k, n, 0.75f, dst.data());
        int64_t wrong = 0;
        for (int64_t j = 0; j < cols; ++j)
          for (int64_t t = 0; t < kw; ++t) {
            const uint32_t w = dst[static_cast<size_t>((j / 16) * kw * 16 + t * 16 + j % 16)];
            auto want = [&](int64_t p) {
              return j < n && p < k ? cpu::round_to_bf16(0.75f * plain[p * ldp + j]) : 0.0f;
            };
            wrong += low_of(w) != want(2 * t) || high_of(w) != want(2 * t + 1);
          }
        EXPECT_EQ(wrong, 0);
      }
    }
  }
}

TEST(CpuAttentionBf16, ProductsMatchTheRoundedOracleOnEveryTail) {
  if (!cpu::attention_bf16_available()) GTEST_SKIP() << "no avx512_bf16 on this CPU";
  struct Case {
    int64_t m, k, n;
  };
  // Both forms where the CPU has them: vdpbf16ps register tiles, and AMX tiles.
  using Product = void (*)(const uint32_t*, int64_t, int64_t, int64_t, const uint32_t*, int64_t,
                           float*, int64_t, const float*);
  std::vector<std::pair<std::string, Product>> forms = {{"avx512", &cpu::panel_product_bf16_avx512}};
  // A CPU whose /proc/cpuinfo lists amx_bf16 (the kernel enabled it) runs the AMX form.
  if (cpu::describe_cpu().features.amx_bf16) EXPECT_TRUE(cpu::attention_amx_available());
  if (cpu::attention_amx_available()) forms.emplace_back("amx", &cpu::panel_product_bf16_amx);
  const std::vector<Case> cases = {{1, 1, 1},    {12, 64, 128}, {13, 64, 128}, {128, 128, 64},
                                   {16, 32, 32}, {17, 31, 33},  {33, 96, 47},  {64, 200, 128},
                                   {7, 33, 17},  {25, 5, 40},   {11, 130, 31}, {24, 2, 16},
                                   {3, 77, 200}, {30, 64, 48}};
  for (const Case& c : cases) {
    SCOPED_TRACE("m " + std::to_string(c.m) + " k " + std::to_string(c.k) + " n " +
                 std::to_string(c.n));
    const int64_t lda = c.k + 5, ldb = c.n + 1, ldc = c.n + 7, kw = (c.k + 1) / 2;
    const std::vector<float> a = random_floats(static_cast<size_t>(c.m * lda), 3);
    const std::vector<float> b = random_floats(static_cast<size_t>(c.k * ldb), 4);
    const std::vector<float> scale = random_floats(static_cast<size_t>(c.m), 5);
    std::vector<uint32_t> a_pairs(static_cast<size_t>(c.m * (kw + 2)));
    cpu::rows_to_pairs_bf16(a.data(), lda, c.m, c.k, a_pairs.data(), kw + 2);
    std::vector<uint32_t> panels(static_cast<size_t>(cpu::pair_panel_words(c.k, c.n)));
    cpu::pack_pairs_bf16(b.data(), ldb, false, c.k, c.n, 1.0f, panels.data());
    for (const float* rs : {static_cast<const float*>(nullptr), scale.data()})
    for (const auto& [form, product] : forms) {
      SCOPED_TRACE(form);
      std::vector<float> got(static_cast<size_t>(c.m * ldc), 42.0f);
      product(a_pairs.data(), kw + 2, c.m, c.k, panels.data(), c.n, got.data(), ldc, rs);
      double worst = 0;
      int64_t touched = 0;
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
          const float g = got[i * ldc + j];
          if (j >= c.n) {
            touched += g != 42.0f;
            continue;
          }
          double want = 0, mag = 0;
          for (int64_t p = 0; p < c.k; ++p) {
            const double t = double(cpu::round_to_bf16(a[i * lda + p])) *
                             double(cpu::round_to_bf16(b[p * ldb + j]));
            want += t;
            mag += std::fabs(t);
          }
          if (rs) {
            want *= rs[i];
            mag *= std::fabs(rs[i]);
          }
          worst = std::max(worst, std::fabs(g - want) / (mag + 1e-6));
        }
      EXPECT_EQ(touched, 0) << "columns past n were written";
      EXPECT_LE(worst, 1e-5) << "relative to the sum of |terms|";
    }
  }
}

}  // namespace
}  // namespace osprey::testing
