// What the load generator knows of a model: its inputs and outputs from the KServe v2
// metadata endpoint, and the concrete request shapes (-1 dims filled from --shape, the batch
// dimension from --batch-size).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"
#include "osprey/status.h"

namespace osprey::loadgen {

struct TensorSpec {
  std::string name;
  std::string datatype;        // KServe v2 name: FP32, INT64, BOOL, ...
  std::vector<int64_t> shape;  // -1 = variable
};

struct ModelInfo {
  std::string name;
  std::vector<TensorSpec> inputs, outputs;
};

// Parses GET v2/models/{m} (JSON). Errors name what is missing.
Result<ModelInfo> parse_metadata_json(std::string_view json);

// Bytes per element of a KServe datatype; 0 for BYTES and unknown names.
size_t datatype_size(std::string_view datatype);

// The request shape of `input`: an override for its name wins (its rank must match); else
// every -1 must be resolved: the first dim by `batch_size` when `batch_size` > 0 and it is
// variable, otherwise an error naming the input and asking for --shape.
Result<std::vector<int64_t>> resolve_shape(const TensorSpec& input,
                                           const std::vector<ShapeOverride>& overrides,
                                           int64_t batch_size);

}  // namespace osprey::loadgen
