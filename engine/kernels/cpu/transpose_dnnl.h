// What the oneDNN Transpose kernel (transpose_dnnl.cc) tells beyond its entry point in cpu.inc.
#pragma once

#include <cstdint>
#include <vector>

#include "osprey/tensor.h"

namespace osprey::cpu {

// Channel counts up to this move to the last axis on interleave_planes (row_kernels.h).
inline constexpr int64_t kInterleaveMaxPlanes = 4;

// Whether the kernel transposes x of this shape by `perm` on interleave_planes rather than a
// oneDNN reorder: perm moves axis 1 of a rank >= 3 tensor to the end and keeps the others in
// order ([N, C, spatial...] -> [N, spatial..., C]), with at most kInterleaveMaxPlanes channels.
bool transpose_interleaves(const Shape& x, const std::vector<int64_t>& perm);

}  // namespace osprey::cpu
