// kernels/cpu/panel_product.h's packing: for each block of kc rows, the panels side by side
// (48 columns, the last 16, 32 or 48 wide, or the last two 32 where the last would be 16),
// every element of B where panel_column / panel_width place it and zeros past N. Products on
// these layouts are checked against an oracle in cpu_matmul_core_test.cc, and here with each
// tail form (half_tail) forced.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/cpu/panel_product.h"

namespace osprey {
namespace {

TEST(CpuPanelPacking, PanelsTileEveryColumnAndHoldBWhereTheyArePlaced) {
  struct Case {
    int64_t K, N;
    std::vector<int64_t> widths;
  };
  const std::vector<Case> cases = {
      {3, 5, {16}},           {5, 40, {48}},         {2, 48, {48}},
      {7, 64, {32, 32}},      {4, 100, {48, 32, 32}}, {3, 112, {48, 32, 32}},
      {9, 80, {48, 32}},      {1700, 20, {32}},       {2, 256, {48, 48, 48, 48, 32, 32}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "K=" << c.K << " N=" << c.N);
    std::vector<float> b(static_cast<size_t>(c.K * c.N));
    for (size_t i = 0; i < b.size(); ++i) b[i] = 1.0f + static_cast<float>(i);
    const cpu::PanelB pb = cpu::pack_panel_b(b.data(), c.K, c.N, c.N, 1);
    ASSERT_EQ(pb.panels, static_cast<int64_t>(c.widths.size()));
    int64_t column = 0;
    for (int64_t p = 0; p < pb.panels; ++p) {
      EXPECT_EQ(cpu::panel_width(pb, p), c.widths[static_cast<size_t>(p)]) << "panel " << p;
      EXPECT_EQ(cpu::panel_column(pb, p), column) << "panel " << p;
      column += cpu::panel_width(pb, p);
    }
    EXPECT_EQ(pb.padded_n, column);
    EXPECT_GE(pb.padded_n, c.N);
    for (int64_t k0 = 0; k0 < c.K; k0 += pb.kc) {
      const int64_t kc = std::min(pb.kc, c.K - k0);
      for (int64_t p = 0; p < pb.panels; ++p) {
        const int64_t col = cpu::panel_column(pb, p), width = cpu::panel_width(pb, p);
        const float* panel = pb.data + k0 * pb.padded_n + col * kc;
        for (int64_t k = 0; k < kc; ++k)
          for (int64_t j = 0; j < width; ++j) {
            const float want = col + j < c.N ? b[static_cast<size_t>((k0 + k) * c.N + col + j)] : 0.0f;
            ASSERT_EQ(panel[k * width + j], want) << "k=" << k0 + k << " column " << col + j;
          }
      }
    }
  }
}

// write_panel_b_row puts each row, in any order, where pack_panel_b puts it: the same bytes,
// padding included (storage first filled with a poison value).
TEST(CpuPanelPacking, RowsWrittenOneByOneMatchThePackedB) {
  for (const auto& [K, N] : std::vector<std::pair<int64_t, int64_t>>{
           {3, 5}, {7, 64}, {4, 100}, {9, 80}, {1700, 20}, {1500, 112}, {2, 256}}) {
    SCOPED_TRACE(::testing::Message() << "K=" << K << " N=" << N);
    std::vector<float> b(static_cast<size_t>(K * N));
    for (size_t i = 0; i < b.size(); ++i) b[i] = 1.0f + static_cast<float>(i);
    const cpu::PanelB packed = cpu::pack_panel_b(b.data(), K, N, N, 1);
    cpu::PanelB rows = cpu::panel_b_geometry(K, N);
    ASSERT_EQ(rows.padded_n, packed.padded_n);
    std::vector<float> storage(static_cast<size_t>(K * rows.padded_n), -7.0f);
    rows.data = storage.data();
    for (int64_t k = K - 1; k >= 0; --k) cpu::write_panel_b_row(rows, k, b.data() + k * N);
    for (size_t i = 0; i < storage.size(); ++i) ASSERT_EQ(storage[i], packed.data[i]) << "element " << i;
  }
}

// Whether a last panel with at most 8 columns past a full vector runs them on 256-bit vectors
// (half_tail, chosen by the CPU) or on the padded 512-bit one, the product is the plain sum's:
// N with such tails (5, 24, 40, 72, 100) and without (16, 64), one block of K and three, the
// row counts off the 8-row tile, with bias, beta and a clamp.
TEST(CpuPanelPacking, HalfVectorTailsGiveThePlainProduct) {
  if (!cpu::panel_product_supported()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const auto& [K, N] : std::vector<std::pair<int64_t, int64_t>>{
           {96, 24}, {144, 40}, {33, 5}, {1701, 72}, {20, 100}, {50, 16}, {7, 64}}) {
    std::vector<float> b(static_cast<size_t>(K * N)), bias(static_cast<size_t>(N));
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>((i * 37) % 19) / 19.0f - 0.5f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.25f - static_cast<float>(i % 5) / 10.0f;
    for (const bool half : {false, true}) {
      cpu::PanelB pb = cpu::pack_panel_b(b.data(), K, N, N, 1);
      pb.half_tail = half;
      for (const int64_t M : {1, 7, 8, 19}) {
        SCOPED_TRACE(::testing::Message() << "K=" << K << " N=" << N << " M=" << M << " half=" << half);
        std::vector<float> a(static_cast<size_t>(M * K));
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>((i * 13) % 11) / 11.0f - 0.4f;
        std::vector<float> y0(static_cast<size_t>(M * N));
        for (size_t i = 0; i < y0.size(); ++i) y0[i] = static_cast<float>(i % 7) - 3.0f;
        std::vector<float> y = y0;
        const float beta = 0.5f, lo = -1.0f, hi = 2.0f;
        cpu::panel_product(pb, a.data(), M, K, bias.data(), beta, y.data(), 2, true, lo, hi);
        for (int64_t i = 0; i < M; ++i)
          for (int64_t j = 0; j < N; ++j) {
            double sum = bias[static_cast<size_t>(j)] + beta * y0[static_cast<size_t>(i * N + j)];
            for (int64_t k = 0; k < K; ++k)
              sum += static_cast<double>(a[static_cast<size_t>(i * K + k)]) * b[static_cast<size_t>(k * N + j)];
            const double want = std::clamp(sum, static_cast<double>(lo), static_cast<double>(hi));
            ASSERT_NEAR(y[static_cast<size_t>(i * N + j)], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(K))))
                << "row " << i << " column " << j;
          }
      }
    }
  }
}

}  // namespace
}  // namespace osprey
