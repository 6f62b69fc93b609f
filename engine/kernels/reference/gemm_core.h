// One shared, cache-blocked matrix multiply for the reference kernels (Gemm, MatMul, Conv,
// ConvTranspose, RNNs, the integer variants).
#pragma once

#include <cstdint>

namespace osprey {
class ThreadPool;
}

namespace osprey::ref {

// C[M x N] = alpha * op(A)[M x K] * op(B)[K x N] + beta * C, all row-major with leading
// dimensions lda/ldb/ldc (in elements). op(A) = A^T when trans_a (then A is K x M), same for B.
// beta == 0 overwrites C (NaNs in C are not propagated). M, N or K may be 0.
// Instantiated for float, double, int32_t, int64_t, uint32_t, uint64_t (integers wrap).
// With a pool, C is split into column (or, for tall-thin products, row) blocks computed in
// parallel; every element is accumulated in the same order either way, so results do not
// depend on the thread count.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, T alpha, const T* A,
          int64_t lda, const T* B, int64_t ldb, T beta, T* C, int64_t ldc,
          ThreadPool* pool = nullptr);

}  // namespace osprey::ref
