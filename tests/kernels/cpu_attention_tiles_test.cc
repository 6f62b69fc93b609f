// The attention's register-tile products (kernels/cpu/attention_tiles.h) against a plain
// double-precision triple loop: every ISA variant this CPU runs, both packings (B and B^T),
// row counts that leave every tail tile, column counts off the 16-column panels, strided A and
// C, and C's neighbours left untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "kernels/cpu/attention_tiles.h"

namespace osprey::testing {
namespace {

using cpu::VectorIsa;

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

TEST(CpuAttentionTiles, PackPanelsLaysOutColumnsAndZeroPads) {
  // B [3, 18] stored plain (ld 20) and as B^T [18, 3] (ld 5).
  const int64_t k = 3, n = 18;
  std::vector<float> plain(k * 20), trans(n * 5);
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) plain[p * 20 + j] = trans[j * 5 + p] = float(100 * p + j);
  ASSERT_EQ(cpu::panel_floats(k, n), k * 32);
  for (bool transposed : {false, true}) {
    std::vector<float> dst(cpu::panel_floats(k, n), -1.0f);
    cpu::pack_panels(transposed ? trans.data() : plain.data(), transposed ? 5 : 20, transposed,
                     k, n, 0.5f, dst.data());
    for (int64_t j = 0; j < 32; ++j)
      for (int64_t p = 0; p < k; ++p)
        EXPECT_EQ(dst[(j / 16) * k * 16 + p * 16 + j % 16], j < n ? 0.5f * float(100 * p + j) : 0.0f)
            << "transposed " << transposed << " p " << p << " j " << j;
  }
}

TEST(CpuAttentionTiles, BlocksOfQueryRowsAreWholeTiles) {
  // Whole register tiles of rows (12 on AVX-512, 6 on AVX2, 2 on baseline x86-64), about
  // 8192 scores, never more rows than the queries, at least one tile at long key lengths.
  const std::pair<VectorIsa, int64_t> tiles[] = {
      {VectorIsa::avx512, 12}, {VectorIsa::avx2, 6}, {VectorIsa::generic, 2}};
  for (const auto& [isa, tile] : tiles) {
    EXPECT_EQ(cpu::panel_tile_rows(isa), tile);
    for (const int64_t keys : {1, 7, 128, 384, 1000, 8192, 100000}) {
      const int64_t rows = cpu::attention_block_rows(1 << 20, keys, isa);
      EXPECT_EQ(rows % tile, 0) << keys;
      EXPECT_GE(rows, tile) << keys;
      EXPECT_LT((rows - tile) * keys, 8192) << keys;  // one tile fewer would be under 8192
      EXPECT_EQ(cpu::attention_block_rows(5, keys, isa), std::min<int64_t>(5, rows)) << keys;
    }
  }
  EXPECT_EQ(cpu::attention_block_rows(128, 128, VectorIsa::avx512), 72);
}

TEST(CpuAttentionTiles, ProductMatchesTripleLoopOnEveryIsa) {
  struct Case {
    int64_t m, k, n;
  };
  const std::vector<Case> cases = {{1, 1, 1},    {6, 32, 16},  {7, 32, 128}, {13, 17, 37},
                                   {5, 64, 40},  {12, 128, 32}, {2, 3, 15},  {25, 130, 33}};
  for (VectorIsa isa : {VectorIsa::generic, VectorIsa::avx2, VectorIsa::avx512}) {
    if (!cpu::vector_isa_supported(isa)) continue;
    for (const auto& c : cases)
      for (bool transposed : {false, true}) {
        SCOPED_TRACE(std::string(cpu::vector_isa_name(isa)) + " m " + std::to_string(c.m) +
                     " k " + std::to_string(c.k) + " n " + std::to_string(c.n) +
                     (transposed ? " B^T" : " B"));
        const int64_t lda = c.k + 3, ldb = (transposed ? c.k : c.n) + 2, ldc = c.n + 5;
        const auto a = random_floats(size_t(c.m * lda), 1);
        const auto b = random_floats(size_t((transposed ? c.n : c.k) * ldb), 2);
        std::vector<float> panels(cpu::panel_floats(c.k, c.n));
        const float scale = 0.37f;
        cpu::pack_panels(b.data(), ldb, transposed, c.k, c.n, scale, panels.data());
        // Without and with a scale per row of C.
        std::vector<float> row_scale(size_t(c.m));
        for (int64_t i = 0; i < c.m; ++i) row_scale[size_t(i)] = 0.25f + 0.125f * float(i % 7);
        for (bool scaled : {false, true}) {
          std::vector<float> out(size_t(c.m * ldc), 42.0f);
          cpu::panel_product(isa, a.data(), lda, c.m, c.k, panels.data(), c.n, out.data(), ldc,
                             scaled ? row_scale.data() : nullptr);
          for (int64_t i = 0; i < c.m; ++i)
            for (int64_t j = 0; j < ldc; ++j) {
              const float got = out[i * ldc + j];
              if (j >= c.n) {  // past the row's n columns: untouched
                EXPECT_EQ(got, 42.0f) << i << "," << j;
                continue;
              }
              double want = 0;
              for (int64_t p = 0; p < c.k; ++p)
                want += double(a[i * lda + p]) *
                        double(transposed ? b[j * ldb + p] : b[p * ldb + j]);
              want *= scale;  // packed into B
              if (scaled) want *= row_scale[size_t(i)];
              EXPECT_NEAR(got, want, 1e-5 * (1 + std::sqrt(double(c.k)))) << i << "," << j;
            }
        }
      }
  }
}

}  // namespace
}  // namespace osprey::testing
