// Batched 2-D transposes of float32 on 8 x 8 register tiles (transpose_tiles.cc), for the
// Transpose kernel (transpose_dnnl.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "osprey/tensor.h"
#include "threading/thread_pool.h"

namespace osprey::cpu {

// Whether transposing x by perm is, once size-1 axes are left out and axes that stay
// neighbours in order are merged, [batch, m, n] -> [batch, n, m] (batch 1 for [m, n] ->
// [n, m]); sets the three sizes.
bool batched_transpose_view(const Shape& x, const std::vector<int64_t>& perm, int64_t* batch, int64_t* m,
                            int64_t* n);

// Whether this CPU runs batched_transpose (AVX2).
bool transpose_tiles_supported();

// y[b, j, i] = x[b, i, j] for b < batch, i < m, j < n; strips of 8 output rows across `pool`
// (null: the calling thread). x and y must not overlap.
void batched_transpose(const float* x, float* y, int64_t batch, int64_t m, int64_t n, ThreadPool* pool);

}  // namespace osprey::cpu
