// Wire tensors <-> engine tensors for one execution: the inputs of a batch of requests are
// concatenated along dim 0 into one engine tensor, and an output is split back per request.
#pragma once

#include <cstdint>
#include <vector>

#include "api/types.h"
#include "osprey/status.h"
#include "osprey/tensor.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

// Concatenates `parts` (same dtype and non-batch dims; validated) along dim 0 when
// `batching`, else takes the single part as is. `reshape` (the config's reshape, may be empty)
// replaces the non-batch dims. Refuses more than `max_elements` before allocating.
Result<Tensor> gather_input(const std::vector<const WireTensor*>& parts,
                            const inference::ModelInput& config, bool batching,
                            int64_t max_elements);

// Splits an engine output into one wire tensor per request (`batch_sizes`, in order), dim 0
// being the batch when `batching`. With a reshape in the config, each piece takes the config's
// dims (the shape the client sees).
Result<std::vector<WireTensor>> split_output(const Tensor& tensor,
                                             const inference::ModelOutput& config, bool batching,
                                             const std::vector<int64_t>& batch_sizes);

// `dims` with one -1 resolved so that it holds `numel` elements; error if impossible.
Result<Shape> resolve_dims(const std::vector<int64_t>& dims, int64_t numel);

}  // namespace osprey::server
