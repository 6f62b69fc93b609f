// ONNX protobuf -> IR. The only place that knows the ONNX wire format.
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "osprey/options.h"
#include "osprey/session.h"

namespace osprey::onnx_import {

constexpr int kMinDefaultOpset = 1;
constexpr int kMaxDefaultOpset = 22;

struct ImportedModel {
  std::shared_ptr<ir::Graph> graph;
  ModelStats stats;
};

// Parses and validates a model. `model_dir` resolves external-data locations.
Result<ImportedModel> import_model(const std::string& bytes, const std::string& model_dir,
                                   const SessionOptions& options);

// A model file opened for import_model_file (owns the descriptor).
class ModelFile {
 public:
  // NotFound when `path` is missing, not a regular file or cannot be opened (as read_file).
  static Result<ModelFile> open(const std::string& path);
  ModelFile(ModelFile&& o) noexcept;
  ModelFile& operator=(ModelFile&& o) noexcept;
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;
  ~ModelFile();

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  int64_t size() const { return size_; }

 private:
  ModelFile() = default;
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

// As import_model, parsing the file as it is read instead of from a copy of it in memory (the
// file's bytes and the parsed model are never held at the same time).
Result<ImportedModel> import_model_file(ModelFile& file, const std::string& model_dir,
                                        const SessionOptions& options);

// Parses a serialized TensorProto (as in the ONNX test data's input_N.pb files).
Result<Tensor> parse_tensor(const std::string& bytes, const std::string& dir,
                            int64_t max_elements);

// Parses a serialized TensorProto, SequenceProto or OptionalProto, chosen by `kind`
// ("tensor", "sequence", "optional") as declared by the model's value info.
Result<Value> parse_value(const std::string& bytes, const std::string& kind,
                          int64_t max_elements);

Result<std::string> read_file(const std::string& path);

}  // namespace osprey::onnx_import
