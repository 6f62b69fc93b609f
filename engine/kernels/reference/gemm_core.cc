// Cache-blocked GEMM (Goto/BLIS-style loop order), portable C++ only: B is packed into
// KC x NR micro-panels, A into MR x KC micro-panels, and a fixed-size MR x NR micro-kernel
// accumulates in a local array the compiler keeps in vector registers.
#include "kernels/reference/gemm_core.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "threading/thread_pool.h"

namespace osprey::ref {
namespace {

constexpr int64_t kMR = 6;      // rows of C per micro-tile
constexpr int64_t kKC = 256;    // depth of a packed block
constexpr int64_t kMC = 16 * kMR;  // rows of A per packed block (fits L2 with kKC)
constexpr int64_t kNC = 512;    // columns of B per packed block

// Columns per micro-tile: 32 bytes of T (two 128-bit vectors per row).
template <class T>
constexpr int64_t nr_of() {
  return sizeof(T) >= 8 ? 4 : 8;
}

// Packs op(A)[i0 : i0+mc, k0 : k0+kc] into panels of kMR rows: ap[p][k][i], zero padded.
template <class T>
void pack_a(bool trans, const T* A, int64_t lda, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
            T* ap) {
  for (int64_t p = 0; p < mc; p += kMR) {
    const int64_t mr = std::min(kMR, mc - p);
    T* dst = ap + p * kc;
    for (int64_t k = 0; k < kc; ++k) {
      int64_t i = 0;
      if (trans) {
        const T* src = A + (k0 + k) * lda + (i0 + p);
        for (; i < mr; ++i) dst[k * kMR + i] = src[i];
      } else {
        const T* src = A + (i0 + p) * lda + (k0 + k);
        for (; i < mr; ++i) dst[k * kMR + i] = src[i * lda];
      }
      for (; i < kMR; ++i) dst[k * kMR + i] = T(0);
    }
  }
}

// Packs op(B)[k0 : k0+kc, j0 : j0+nc] into panels of NR columns: bp[q][k][j], zero padded.
template <class T>
void pack_b(bool trans, const T* B, int64_t ldb, int64_t k0, int64_t kc, int64_t j0, int64_t nc,
            T* bp) {
  constexpr int64_t NR = nr_of<T>();
  for (int64_t q = 0; q < nc; q += NR) {
    const int64_t nr = std::min(NR, nc - q);
    T* dst = bp + q * kc;
    for (int64_t k = 0; k < kc; ++k) {
      int64_t j = 0;
      if (trans) {
        const T* src = B + (j0 + q) * ldb + (k0 + k);
        for (; j < nr; ++j) dst[k * NR + j] = src[j * ldb];
      } else {
        const T* src = B + (k0 + k) * ldb + (j0 + q);
        for (; j < nr; ++j) dst[k * NR + j] = src[j];
      }
      for (; j < NR; ++j) dst[k * NR + j] = T(0);
    }
  }
}

// acc = ap (kMR x kc panel) * bp (kc x NR panel). Generic version (integers).
template <class T>
inline void micro_kernel(int64_t kc, const T* __restrict ap, const T* __restrict bp,
                         T (&acc)[kMR][nr_of<T>()]) {
  constexpr int64_t NR = nr_of<T>();
  T c[kMR][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const T* a = ap + k * kMR;
    const T* b = bp + k * NR;
    for (int64_t i = 0; i < kMR; ++i)
      for (int64_t j = 0; j < NR; ++j) c[i][j] += a[i] * b[j];
  }
  for (int64_t i = 0; i < kMR; ++i)
    for (int64_t j = 0; j < NR; ++j) acc[i][j] = c[i][j];
}

// Floating-point version on GNU vector types (two 16-byte vectors per row of the tile):
// plain auto-vectorization of the loop above is fragile (GCC 12 at -O3 vectorizes the k loop
// instead and runs 15x slower), so the vector width is spelled out. No intrinsics, no -march.
template <class T>
inline void micro_kernel_vec(int64_t kc, const T* __restrict ap, const T* __restrict bp,
                             T (&acc)[kMR][nr_of<T>()]) {
  constexpr int64_t NR = nr_of<T>();
  constexpr int64_t W = NR / 2;
  typedef T V __attribute__((vector_size(16)));
  static_assert(sizeof(V) == W * sizeof(T));
  V c0[kMR] = {}, c1[kMR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const T* a = ap + k * kMR;
    V b0, b1;
    std::memcpy(&b0, bp + k * NR, sizeof(V));
    std::memcpy(&b1, bp + k * NR + W, sizeof(V));
    for (int64_t i = 0; i < kMR; ++i) {
      c0[i] += a[i] * b0;
      c1[i] += a[i] * b1;
    }
  }
  for (int64_t i = 0; i < kMR; ++i) {
    std::memcpy(&acc[i][0], &c0[i], sizeof(V));
    std::memcpy(&acc[i][W], &c1[i], sizeof(V));
  }
}
template <>
inline void micro_kernel<float>(int64_t kc, const float* __restrict ap,
                                const float* __restrict bp, float (&acc)[kMR][8]) {
  micro_kernel_vec<float>(kc, ap, bp, acc);
}
template <>
inline void micro_kernel<double>(int64_t kc, const double* __restrict ap,
                                 const double* __restrict bp, double (&acc)[kMR][4]) {
  micro_kernel_vec<double>(kc, ap, bp, acc);
}

// One row of C (M = 1, a recurrent cell's step at batch 1, a classifier head): no packing, and
// no micro-tile of kMR rows of which one is used. With B stored [N, K] each C[j] is a dot
// product over a contiguous row, in 8 interleaved partial sums; otherwise rows of B are added
// into a row of sums, k by k.
template <class T>
void gemm_row(bool trans_a, bool trans_b, int64_t N, int64_t K, T alpha, const T* A, int64_t lda,
              const T* B, int64_t ldb, T* C) {
  const auto a_at = [&](int64_t k) { return trans_a ? A[k * lda] : A[k]; };
  if (trans_b) {
    std::vector<T> gathered;  // A's row, when it is stored as a column
    if (trans_a) {
      gathered.resize(static_cast<size_t>(K));
      for (int64_t k = 0; k < K; ++k) gathered[static_cast<size_t>(k)] = a_at(k);
    }
    const T* a = trans_a ? gathered.data() : A;
    for (int64_t j = 0; j < N; ++j) {
      const T* b = B + j * ldb;
      T part[8] = {};
      int64_t k = 0;
      for (; k + 8 <= K; k += 8)
        for (int u = 0; u < 8; ++u) part[u] += a[k + u] * b[k + u];
      for (; k < K; ++k) part[0] += a[k] * b[k];
      const T sum = ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
      C[j] += alpha * sum;
    }
    return;
  }
  std::vector<T> acc(static_cast<size_t>(N), T(0));
  for (int64_t k = 0; k < K; ++k) {
    const T ak = a_at(k);
    const T* b = B + k * ldb;
    for (int64_t j = 0; j < N; ++j) acc[static_cast<size_t>(j)] += ak * b[j];
  }
  for (int64_t j = 0; j < N; ++j) C[j] += alpha * acc[static_cast<size_t>(j)];
}

template <class T>
void gemm_serial(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
                 int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc) {
  if (M <= 0 || N <= 0) return;
  // C = beta * C first; the blocked loops then only accumulate.
  if (beta == T(0)) {
    for (int64_t i = 0; i < M; ++i) std::fill(C + i * ldc, C + i * ldc + N, T(0));
  } else if (beta != T(1)) {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C[i * ldc + j] *= beta;
  }
  if (K <= 0 || alpha == T(0)) return;
  if (M == 1) {
    gemm_row(trans_a, trans_b, N, K, alpha, A, lda, B, ldb, C);
    return;
  }

  constexpr int64_t NR = nr_of<T>();
  const int64_t nc_max = std::min(kNC, (N + NR - 1) / NR * NR);
  const int64_t mc_max = std::min(kMC, (M + kMR - 1) / kMR * kMR);
  const int64_t kc_max = std::min(kKC, K);
  std::vector<T> bpack(static_cast<size_t>(nc_max * kc_max));
  std::vector<T> apack(static_cast<size_t>(mc_max * kc_max));
  T acc[kMR][NR];

  for (int64_t j0 = 0; j0 < N; j0 += kNC) {
    const int64_t nc = std::min(kNC, N - j0);
    for (int64_t k0 = 0; k0 < K; k0 += kKC) {
      const int64_t kc = std::min(kKC, K - k0);
      pack_b(trans_b, B, ldb, k0, kc, j0, nc, bpack.data());
      for (int64_t i0 = 0; i0 < M; i0 += kMC) {
        const int64_t mc = std::min(kMC, M - i0);
        pack_a(trans_a, A, lda, i0, mc, k0, kc, apack.data());
        for (int64_t q = 0; q < nc; q += NR) {
          const int64_t nr = std::min(NR, nc - q);
          for (int64_t p = 0; p < mc; p += kMR) {
            const int64_t mr = std::min(kMR, mc - p);
            micro_kernel<T>(kc, apack.data() + p * kc, bpack.data() + q * kc, acc);
            T* c = C + (i0 + p) * ldc + (j0 + q);
            if (mr == kMR && nr == NR) {
              for (int64_t i = 0; i < kMR; ++i)
                for (int64_t j = 0; j < NR; ++j) c[i * ldc + j] += alpha * acc[i][j];
            } else {
              for (int64_t i = 0; i < mr; ++i)
                for (int64_t j = 0; j < nr; ++j) c[i * ldc + j] += alpha * acc[i][j];
            }
          }
        }
      }
    }
  }
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc, ThreadPool* pool) {
  if (!pool || pool->num_threads() == 1 || M <= 0 || N <= 0) {
    gemm_serial(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    return;
  }
  const int64_t depth = std::max<int64_t>(K, 1);
  constexpr int64_t NR = nr_of<T>();
  if (N >= M || N >= 4 * NR * pool->num_threads()) {
    // Column blocks of NR: each computes C[:, j0:j1] from B[:, j0:j1] (A is re-packed per block).
    const int64_t tiles = (N + NR - 1) / NR;
    pool->parallel_for(tiles, M * depth * NR, [&](int64_t b, int64_t e) {
      const int64_t j0 = b * NR, j1 = std::min(N, e * NR);
      const T* Bj = trans_b ? B + j0 * ldb : B + j0;
      gemm_serial(trans_a, trans_b, M, j1 - j0, K, alpha, A, lda, Bj, ldb, beta, C + j0, ldc);
    });
  } else {
    // Row blocks of kMR: each computes C[i0:i1, :] from A[i0:i1, :] (B is re-packed per block).
    const int64_t tiles = (M + kMR - 1) / kMR;
    pool->parallel_for(tiles, N * depth * kMR, [&](int64_t b, int64_t e) {
      const int64_t i0 = b * kMR, i1 = std::min(M, e * kMR);
      const T* Ai = trans_a ? A + i0 : A + i0 * lda;
      gemm_serial(trans_a, trans_b, i1 - i0, N, K, alpha, Ai, lda, B, ldb, beta, C + i0 * ldc, ldc);
    });
  }
}

#define OSPREY_GEMM_INSTANTIATE(T)                                                          \
  template void gemm<T>(bool, bool, int64_t, int64_t, int64_t, T, const T*, int64_t, const T*, \
                        int64_t, T, T*, int64_t, ThreadPool*);
OSPREY_GEMM_INSTANTIATE(float)
OSPREY_GEMM_INSTANTIATE(double)
OSPREY_GEMM_INSTANTIATE(int32_t)
OSPREY_GEMM_INSTANTIATE(int64_t)
OSPREY_GEMM_INSTANTIATE(uint32_t)
OSPREY_GEMM_INSTANTIATE(uint64_t)
#undef OSPREY_GEMM_INSTANTIATE

}  // namespace osprey::ref
