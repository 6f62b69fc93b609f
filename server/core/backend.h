// What the server core needs from an execution backend: load one version of a model into
// `instance_count()` instances, and run a batch of (already validated) requests on one of them.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/types.h"
#include "osprey/status.h"
#include "osprey_server/model_config.pb.h"

namespace osprey::server {

struct VersionSource {
  std::string model;
  int64_t version = 0;
  std::string model_dir;   // canonical
  std::string model_file;  // canonical
  std::string fingerprint;
  inference::ModelConfig config;  // validated; inputs/outputs may still need completing
};

struct BackendOptions {
  int total_threads = 1;  // engine threads shared by all instances of the version (>= 1)
  int64_t max_tensor_elements = int64_t{1} << 28;
};

struct BatchTiming {
  uint64_t compute_input_ns = 0;  // includes preprocess_ns
  uint64_t compute_infer_ns = 0;
  uint64_t compute_output_ns = 0;  // includes postprocess_ns
  // Set only when the stage ran for the batch (core/processing_model.h).
  std::optional<uint64_t> preprocess_ns;
  std::optional<uint64_t> postprocess_ns;
};

class LoadedModel {
 public:
  virtual ~LoadedModel() = default;
  // The config completed from the model (inputs, outputs, dims).
  virtual const inference::ModelConfig& config() const = 0;
  virtual int instance_count() const = 0;
  // Runs `batch` as one execution on instance `instance` (0 <= instance < instance_count();
  // one caller per instance at a time). Requests were validated against config() and share
  // the non-batch shapes of their inputs. Returns one result per request, in order.
  virtual std::vector<Result<InferResponse>> execute(int instance,
                                                     const std::vector<const InferRequest*>& batch,
                                                     BatchTiming* timing) = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Result<std::unique_ptr<LoadedModel>> load(const VersionSource& source,
                                                    const BackendOptions& options) = 0;
};

}  // namespace osprey::server
