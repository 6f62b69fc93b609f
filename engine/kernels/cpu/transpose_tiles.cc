// Batched 2-D transposes of 4-byte elements on 8 x 8 register tiles (AVX2): y[b, j, i] =
// x[b, i, j]. A permutation is reduced first to the fewest axes (size-1 axes dropped, axes
// that stay neighbours in order merged); when that leaves [M, N] -> [N, M] or
// [B, M, N] -> [B, N, M] (a YOLO head's [3, 85, 1600] -> [3, 1600, 85], NCHW <-> NHWC) the
// transpose runs here, strips of 8 output rows across the pool. oneDNN's reorder took 0.18 ms
// on the head's 544K floats, onnxruntime 0.08.
#include "kernels/cpu/transpose_tiles.h"

#include <immintrin.h>

#include <algorithm>

namespace osprey::cpu {
namespace {

bool avx2_supported() {
  static const bool ok = __builtin_cpu_supports("avx2");
  return ok;
}

// Output rows [j0, j0 + 8) of one [M, N] -> [N, M] transpose (j0 + 8 <= N), all M columns.
__attribute__((target("avx2"))) void strip8(const float* x, float* y, int64_t M, int64_t N, int64_t j0) {
  int64_t i = 0;
  for (; i + 8 <= M; i += 8) {
    const float* s = x + i * N + j0;
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + N), r2 = _mm256_loadu_ps(s + 2 * N),
           r3 = _mm256_loadu_ps(s + 3 * N), r4 = _mm256_loadu_ps(s + 4 * N), r5 = _mm256_loadu_ps(s + 5 * N),
           r6 = _mm256_loadu_ps(s + 6 * N), r7 = _mm256_loadu_ps(s + 7 * N);
    const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    const __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    const __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    float* d = y + j0 * M + i;
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + M, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * M, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * M, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * M, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * M, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * M, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * M, _mm256_permute2f128_ps(u3, u7, 0x31));
  }
  for (; i < M; ++i)
    for (int64_t j = j0; j < j0 + 8; ++j) y[j * M + i] = x[i * N + j];
}

// Output rows [j0, j1) of one transpose, one element at a time (the last strip's tail).
void strip_scalar(const float* x, float* y, int64_t M, int64_t N, int64_t j0, int64_t j1) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = j0; j < j1; ++j) y[j * M + i] = x[i * N + j];
}

}  // namespace

bool batched_transpose_view(const Shape& x, const std::vector<int64_t>& perm, int64_t* batch, int64_t* m,
                            int64_t* n) {
  // Runs of output axes whose input axes follow each other, size-1 axes left out: (first input
  // axis, size), in output order.
  std::vector<std::pair<int64_t, int64_t>> groups;
  int64_t prev = -2;
  for (int64_t p : perm) {
    const int64_t d = x[static_cast<size_t>(p)];
    if (d == 1) continue;
    if (!groups.empty() && p == prev + 1) {
      groups.back().second *= d;
    } else {
      groups.push_back({p, d});
    }
    prev = p;
  }
  std::vector<std::pair<int64_t, int64_t>> by_input = groups;
  std::sort(by_input.begin(), by_input.end());
  if (groups.size() == 2 && groups[0].first > groups[1].first) {
    *batch = 1;
    *m = by_input[0].second;
    *n = by_input[1].second;
    return true;
  }
  if (groups.size() == 3 && groups[0] == by_input[0] && groups[1] == by_input[2] && groups[2] == by_input[1]) {
    *batch = by_input[0].second;
    *m = by_input[1].second;
    *n = by_input[2].second;
    return true;
  }
  return false;
}

bool transpose_tiles_supported() { return avx2_supported(); }

void batched_transpose(const float* x, float* y, int64_t batch, int64_t m, int64_t n, ThreadPool* pool) {
  const int64_t strips = (n + 7) / 8;
  auto body = [&](int64_t u0, int64_t u1) {
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t b = u / strips, j0 = (u % strips) * 8;
      const float* xb = x + b * m * n;
      float* yb = y + b * m * n;
      if (j0 + 8 <= n) strip8(xb, yb, m, n, j0);
      else strip_scalar(xb, yb, m, n, j0, n);
    }
  };
  // One contiguous run of strips per thread (the pool's first-come chunks made 2 threads slower
  // than 1 on NCHW -> NHWC of [1, 64, 56, 56], as for CumSum).
  const int64_t units = batch * strips, parts = pool ? std::min<int64_t>(pool->num_threads(), units) : 1;
  if (parts > 1 && units * m * 8 >= 32768)
    pool->parallel_for(parts, units * m * 8, [&](int64_t p0, int64_t p1) { body(p0 * units / parts, p1 * units / parts); });
  else
    body(0, units);
}

}  // namespace osprey::cpu
