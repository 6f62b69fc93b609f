// Building the input tensors for `osprey run` and `osprey bench` from the model's declared
// inputs, user-given .npy files, --shape overrides, --batch and seeded random data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "input_generator.h"
#include "osprey/session.h"

namespace osprey::cli {

struct InputSpec {
  std::vector<std::pair<std::string, std::string>> files;  // input name -> .npy path
  std::vector<std::pair<std::string, Shape>> shapes;       // input name -> concrete shape
  int64_t batch = 0;  // > 0: first dim of generated inputs whose first dim is not fixed
  uint64_t seed = 0;
  GeneratorOptions generator;
};

struct PreparedInput {
  std::string name;
  Tensor tensor;
  std::string source;  // "file x.npy" or "random uniform, seed 0"
  bool batch_applied = false;
};

// Concrete shape of a generated input: the --shape override (checked against the declared
// rank and fixed dims), else the declared shape with non-fixed dims set to `batch` (first dim,
// when batch > 0) or 1. Errors if the model declares no shape and there is no override.
Result<Shape> resolve_shape(const TensorInfo& info, const Shape* override_shape, int64_t batch, bool* batch_applied);

// One tensor per declared input, in declared order. Names in `spec` that are not model inputs,
// files whose dtype or shape disagree with the declaration, and sequence inputs are errors.
Result<std::vector<PreparedInput>> prepare_inputs(const std::vector<TensorInfo>& declared, const InputSpec& spec);

}  // namespace osprey::cli
