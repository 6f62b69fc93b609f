// Request payloads, made once and reused by every request: input tensors (seeded random,
// zeros, or DIR/<input name>.npy) and the encoded HTTP bodies (binary tensor extension or
// JSON). gRPC requests are built from the same tensors by the gRPC client.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model_info.h"
#include "osprey/status.h"

namespace osprey::loadgen {

struct InputTensor {
  std::string name, datatype;
  std::vector<int64_t> shape;
  std::string bytes;  // little-endian, row-major
};

enum class InputKind { kRandom, kZero, kDirectory };

struct InputSource {
  InputKind kind = InputKind::kRandom;
  std::string directory;  // kDirectory
  uint64_t seed = 0;
};

// "random", "zero" or a directory path.
InputSource parse_input_source(const std::string& text, uint64_t seed);

// One tensor per model input with the given (resolved) shapes. .npy files must match the
// datatype and shape; BYTES inputs are refused (kUnimplemented); limit 1 GiB per tensor.
Result<std::vector<InputTensor>> make_inputs(const ModelInfo& model,
                                             const std::vector<std::vector<int64_t>>& shapes,
                                             const InputSource& source);

struct HttpBody {
  std::string body;
  size_t json_header_size = 0;  // > 0: binary extension (Inference-Header-Content-Length)
};

// JSON header + raw tensor bytes; outputs requested as binary.
HttpBody encode_binary_body(const std::vector<InputTensor>& inputs);
// All-JSON body ("data" arrays); only numeric and BOOL datatypes.
Result<HttpBody> encode_json_body(const std::vector<InputTensor>& inputs);

}  // namespace osprey::loadgen
