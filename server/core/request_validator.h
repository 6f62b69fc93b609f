// Checks an inference request against a model's (completed) config before it is queued:
// names, datatypes, shapes, byte sizes and the element limit. Errors are kInvalidArgument
// and name the input or output.
#pragma once

#include <cstdint>
#include <string>

#include "api/types.h"
#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

struct RequestShape {
  int64_t batch_size = 1;  // dim 0 of every input when max_batch_size > 0, else 1
  std::string shape_key;   // inputs' non-batch shapes: requests batch together only if equal
};

Result<RequestShape> validate_request(const InferRequest& request,
                                      const inference::ModelConfig& config,
                                      int64_t max_tensor_elements);

}  // namespace osprey::server
