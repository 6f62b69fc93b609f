// Shared by the importer's translation units; includes the generated protobuf code.
#pragma once

#include "onnx/onnx_import.h"
#include "osprey_onnx/onnx.pb.h"

namespace osprey::onnx_import {

Result<Tensor> tensor_from_proto(const onnx::TensorProto& p, const std::string& dir,
                                 int64_t max_elements);
ir::ValueType value_type_from_proto(const onnx::TypeProto& t);

}  // namespace osprey::onnx_import
