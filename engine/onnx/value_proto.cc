// SequenceProto and OptionalProto (onnx-data.proto) read with protobuf's generic wire
// parser, so the engine needs only onnx.proto. Field numbers follow onnx-data.proto:
//   SequenceProto: elem_type = 2, tensor_values = 3 (repeated TensorProto)
//   OptionalProto: elem_type = 2, tensor_value = 3, sequence_value = 5
#include <google/protobuf/unknown_field_set.h>

#include "onnx/onnx_internal.h"

namespace osprey::onnx_import {

Result<Value> parse_value(const std::string& bytes, const std::string& kind, int64_t max_elements) {
  if (kind == "tensor") {
    OSPREY_ASSIGN_OR_RETURN(Tensor t, parse_tensor(bytes, "", max_elements));
    return Value(std::move(t));
  }
  google::protobuf::UnknownFieldSet fields;
  if (!fields.ParseFromString(bytes)) return invalid_argument("not a valid serialized ", kind);
  std::vector<Tensor> tensors;
  int64_t elem_type = 0;
  for (int i = 0; i < fields.field_count(); ++i) {
    const auto& f = fields.field(i);
    if (f.number() == 2 && f.type() == google::protobuf::UnknownField::TYPE_VARINT) elem_type = static_cast<int64_t>(f.varint());
    if (f.number() == 3 && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED) {
      OSPREY_ASSIGN_OR_RETURN(Tensor t, parse_tensor(f.length_delimited(), "", max_elements));
      tensors.push_back(std::move(t));
    }
    if (kind == "optional" && f.number() == 5 &&
        f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      return parse_value(f.length_delimited(), "sequence", max_elements);  // sequence_value
    if (f.number() >= 4 && f.number() <= 7 && f.type() == google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      return unimplemented(kind, " of sparse tensors, sequences or maps is not supported");
  }
  if (kind == "sequence") return Value::make_sequence(std::move(tensors));
  if (kind == "optional") {
    if (tensors.empty()) return Value();
    return Value(std::move(tensors[0]));
  }
  (void)elem_type;
  return invalid_argument("unknown value kind '", kind, "'");
}

}  // namespace osprey::onnx_import
