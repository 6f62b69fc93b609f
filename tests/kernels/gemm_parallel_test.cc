// The reference GEMM split across a thread pool must give bit-identical results to the
// serial one (same accumulation order per element), for every shape class and transpose; its
// one-row path (M = 1) agrees with a double loop.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kernels/reference/gemm_core.h"
#include "threading/thread_pool.h"

namespace osprey {
namespace {

template <class T>
void check_same(bool ta, bool tb, int64_t M, int64_t N, int64_t K, ThreadPool& pool) {
  std::mt19937 rng(static_cast<unsigned>(M * 131 + N * 7 + K));
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> A(static_cast<size_t>(M * K)), B(static_cast<size_t>(K * N)), C0(static_cast<size_t>(M * N)),
      C1;
  for (auto& v : A) v = static_cast<T>(u(rng));
  for (auto& v : B) v = static_cast<T>(u(rng));
  for (auto& v : C0) v = static_cast<T>(u(rng));
  C1 = C0;
  const int64_t lda = ta ? M : K, ldb = tb ? K : N;
  ref::gemm<T>(ta, tb, M, N, K, T(1.5), A.data(), lda, B.data(), ldb, T(0.5), C0.data(), N, nullptr);
  ref::gemm<T>(ta, tb, M, N, K, T(1.5), A.data(), lda, B.data(), ldb, T(0.5), C1.data(), N, &pool);
  ASSERT_EQ(C0, C1) << "M=" << M << " N=" << N << " K=" << K << " ta=" << ta << " tb=" << tb;
}

TEST(GemmParallelTest, MatchesSerialBitForBit) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (auto [M, N, K] : std::vector<std::array<int64_t, 3>>{
             {1, 1, 1}, {1, 512, 128}, {1, 1000, 1283}, {7, 300, 33}, {300, 7, 33}, {64, 3136, 147}, {768, 128, 64}, {5, 5, 0}, {97, 513, 257}})
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          check_same<float>(ta, tb, M, N, K, pool);
          check_same<double>(ta, tb, M, N, K, pool);
        }
  }
}

TEST(GemmParallelTest, OneRowMatchesADoubleLoop) {
  // M = 1 (an LSTM step at batch 1): every transpose, K below, at and past the 8 partial sums,
  // strided A and B, alpha and beta.
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int64_t K : {1, 7, 8, 9, 130})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        const int64_t N = 37, lda = ta ? 3 : K + 2, ldb = tb ? K + 5 : N + 4;
        std::vector<float> A(static_cast<size_t>(ta ? K * lda : lda)), B(static_cast<size_t>((tb ? N : K) * ldb)),
            C(static_cast<size_t>(N));
        for (auto& v : A) v = static_cast<float>(u(rng));
        for (auto& v : B) v = static_cast<float>(u(rng));
        for (auto& v : C) v = static_cast<float>(u(rng));
        std::vector<double> want(static_cast<size_t>(N));
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<double>(ta ? A[static_cast<size_t>(k * lda)] : A[static_cast<size_t>(k)]) *
                   (tb ? B[static_cast<size_t>(j * ldb + k)] : B[static_cast<size_t>(k * ldb + j)]);
          want[static_cast<size_t>(j)] = -0.75 * acc + 2.0 * C[static_cast<size_t>(j)];
        }
        ref::gemm<float>(ta, tb, 1, N, K, -0.75f, A.data(), lda, B.data(), ldb, 2.0f, C.data(), N, nullptr);
        for (int64_t j = 0; j < N; ++j)
          EXPECT_NEAR(C[static_cast<size_t>(j)], want[static_cast<size_t>(j)], 1e-5 * (1.0 + static_cast<double>(K)))
              << "K=" << K << " ta=" << ta << " tb=" << tb << " j=" << j;
      }
}

}  // namespace
}  // namespace osprey
