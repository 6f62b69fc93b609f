// Model warmup (config `model_warmup`): sample requests run on every instance before a
// version reports READY. A sample that does not fit the model fails the load, naming it.
#pragma once

#include <string>
#include <vector>

#include "api/types.h"
#include "core/backend.h"
#include "osprey/status.h"

namespace osprey::server {

// The requests described by the config's model_warmup samples (zero/random data, or raw
// bytes from `<model_dir>/warmup/<input_data_file>`), each with its repeat count.
struct WarmupSample {
  std::string name;
  InferRequest request;
  int count = 1;
};
Result<std::vector<WarmupSample>> build_warmup_samples(const inference::ModelConfig& config,
                                                       const std::string& model_dir,
                                                       int64_t max_tensor_elements);

// Validates and runs every sample `count` times on every instance of `model`.
Status run_warmup(LoadedModel& model, const std::string& model_dir, int64_t max_tensor_elements);

}  // namespace osprey::server
