// Shared by the importer's translation units; includes the generated protobuf code.
#pragma once

#include <optional>
#include <vector>

#include "onnx/onnx_import.h"
#include "osprey_onnx/onnx.pb.h"

namespace osprey::onnx_import {

// Where a tensor's raw_data lies in an open model file when the importer left it there
// (import_model_file) instead of copying it into the proto.
struct RawDataInFile {
  int fd = -1;
  int64_t offset = 0;
  int64_t length = 0;
};

// `raw_in_file` (may be null) stands for p's raw_data, read straight into the tensor.
Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const std::string& dir,
                                 int64_t max_elements, const RawDataInFile* raw_in_file = nullptr);
ir::ValueType value_type_from_proto(const onnx::TypeProto& t);

// Frees a tensor's data fields (raw_data and the typed repeated fields, capacity included);
// name, type, dims and external-data entries stay.
void release_tensor_payload(onnx::TensorProto* p);
// tensor_from_proto, then release_tensor_payload(p) when the conversion succeeded.
Result<Tensor> take_tensor_from_proto(onnx::TensorProto* p, const std::string& dir,
                                      int64_t max_elements);

// Builds the model's graph from a parsed proto (import_model and import_model_file parse, then
// call this). Releases every initializer's and tensor attribute's data from `m` as it is
// converted, so the weights are not held in both forms at once.
// `raw_in_file` (may be null) has one entry per initializer of the main graph, in order: where
// its raw_data lies in the file when it was left out of `m` (nullopt: nothing left out).
Result<ImportedModel> import_model_proto(
    onnx::ModelProto& m, const std::string& model_dir, const SessionOptions& options,
    const std::vector<std::optional<RawDataInFile>>* raw_in_file = nullptr);

}  // namespace osprey::onnx_import
