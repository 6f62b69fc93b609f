// Tensor slicing and stacking used by control flow and sequence kernels.
#pragma once

#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref::seq {

// The sub-tensor at `index` along `axis`, with that axis removed.
Result<Tensor> take(const Tensor& t, int64_t axis, int64_t index, int64_t max_elements);
// Stacks same-shaped tensors along a new axis `axis` (0..rank).
Result<Tensor> stack(const std::vector<Tensor>& parts, int64_t axis, int64_t max_elements);
// Concatenates same-rank tensors along existing axis `axis`.
Result<Tensor> concat(const std::vector<Tensor>& parts, int64_t axis, int64_t max_elements);
// Parts of `t` along `axis` with the given lengths (sum must equal the axis size).
Result<std::vector<Tensor>> split(const Tensor& t, int64_t axis, const std::vector<int64_t>& lengths,
                                  int64_t max_elements);

}  // namespace osprey::ref::seq
