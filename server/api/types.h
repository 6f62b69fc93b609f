// The server's wire-neutral request and response types. Front ends (HTTP, gRPC) translate
// their protocol into these and back; nothing below the front ends knows about JSON or protobuf
// wire formats. Names follow the KServe v2 / Open Inference Protocol.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace osprey::server {

// A request/response parameter value: bool, int64, double or string (as in KServe v2).
using ParamValue = std::variant<bool, int64_t, double, std::string>;
using Parameters = std::map<std::string, ParamValue>;

// KServe v2 datatype names: "BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16",
// "INT32", "INT64", "FP16", "BF16", "FP32", "FP64", "BYTES".
// Size in bytes of one element, or 0 for BYTES / unknown names.
int64_t datatype_size(const std::string& datatype);
bool is_known_datatype(const std::string& datatype);

// A tensor on the wire. `data` holds the raw little-endian row-major bytes (what the binary
// extension and gRPC raw_*_contents carry). BYTES tensors hold each element as a 4-byte
// little-endian length followed by that many bytes (Triton's raw layout).
struct WireTensor {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;
  std::string data;
  Parameters parameters;
};

struct RequestedOutput {
  std::string name;
  Parameters parameters;  // e.g. "binary_data": bool, "classification": int64 (top-k)
};

struct InferRequest {
  std::string model_name;
  std::string model_version;  // "" = the policy's latest ready version
  std::string id;
  Parameters parameters;      // e.g. "priority", "timeout" (µs), "binary_data_output"
  std::vector<WireTensor> inputs;
  std::vector<RequestedOutput> outputs;  // empty = all outputs
};

struct InferResponse {
  std::string model_name;
  std::string model_version;
  std::string id;
  Parameters parameters;
  std::vector<WireTensor> outputs;
};

struct TensorMetadata {
  std::string name;
  std::string datatype;
  std::vector<int64_t> shape;  // -1 = variable; includes the batch dim (-1) when batching
};

struct ServerMetadata {
  std::string name;
  std::string version;
  std::vector<std::string> extensions;
};

struct ModelMetadata {
  std::string name;
  std::vector<std::string> versions;
  std::string platform;  // "onnxruntime_onnx" for Triton-compatible clients
  std::vector<TensorMetadata> inputs;
  std::vector<TensorMetadata> outputs;
};

// One row of the repository index (Triton's RepositoryIndex).
struct RepositoryEntry {
  std::string name;
  std::string version;  // "" for a model with no loaded version
  std::string state;    // "UNAVAILABLE", "LOADING", "READY", "UNLOADING"
  std::string reason;   // why not ready (e.g. the load error), "" otherwise
};

// Cumulative counts and nanoseconds, as in Triton's statistics extension.
struct StatDuration {
  uint64_t count = 0;
  uint64_t ns = 0;
};

struct InferStats {
  StatDuration success, fail, queue, compute_input, compute_infer, compute_output;
};

struct BatchStats {
  uint64_t batch_size = 0;
  StatDuration compute_input, compute_infer, compute_output;
};

struct ModelStats {
  std::string name;
  std::string version;
  uint64_t last_inference_ms = 0;  // ms since epoch
  uint64_t inference_count = 0;    // items (batch elements) inferred
  uint64_t execution_count = 0;    // backend executions (batches)
  InferStats inference_stats;
  std::vector<BatchStats> batch_stats;
};

}  // namespace osprey::server
