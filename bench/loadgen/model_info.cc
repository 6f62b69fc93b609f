#include "model_info.h"

#include <rapidjson/document.h>

namespace osprey::loadgen {
namespace {

Status parse_tensors(const rapidjson::Value& doc, const char* key, std::vector<TensorSpec>* out) {
  auto it = doc.FindMember(key);
  if (it == doc.MemberEnd()) return Status();
  if (!it->value.IsArray()) return invalid_argument("model metadata: '", key, "' is not an array");
  for (const auto& t : it->value.GetArray()) {
    if (!t.IsObject() || !t.HasMember("name") || !t["name"].IsString() ||
        !t.HasMember("datatype") || !t["datatype"].IsString() || !t.HasMember("shape") ||
        !t["shape"].IsArray())
      return invalid_argument("model metadata: an entry of '", key,
                              "' lacks name, datatype or shape");
    TensorSpec spec{t["name"].GetString(), t["datatype"].GetString(), {}};
    for (const auto& d : t["shape"].GetArray()) {
      if (d.IsInt64()) spec.shape.push_back(d.GetInt64());
      else if (d.IsString()) spec.shape.push_back(std::strtoll(d.GetString(), nullptr, 10));
      else return invalid_argument("model metadata: shape of '", spec.name, "' is not integers");
    }
    out->push_back(std::move(spec));
  }
  return Status();
}

}  // namespace

Result<ModelInfo> parse_metadata_json(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject())
    return invalid_argument("model metadata: response is not a JSON object");
  ModelInfo info;
  if (doc.HasMember("name") && doc["name"].IsString()) info.name = doc["name"].GetString();
  OSPREY_RETURN_IF_ERROR(parse_tensors(doc, "inputs", &info.inputs));
  OSPREY_RETURN_IF_ERROR(parse_tensors(doc, "outputs", &info.outputs));
  if (info.inputs.empty()) return invalid_argument("model metadata: the model lists no inputs");
  return info;
}

size_t datatype_size(std::string_view t) {
  if (t == "BOOL" || t == "INT8" || t == "UINT8") return 1;
  if (t == "INT16" || t == "UINT16" || t == "FP16" || t == "BF16") return 2;
  if (t == "INT32" || t == "UINT32" || t == "FP32") return 4;
  if (t == "INT64" || t == "UINT64" || t == "FP64") return 8;
  return 0;
}

Result<std::vector<int64_t>> resolve_shape(const TensorSpec& input,
                                           const std::vector<ShapeOverride>& overrides,
                                           int64_t batch_size) {
  for (const ShapeOverride& o : overrides) {
    if (o.name != input.name) continue;
    if (o.dims.size() != input.shape.size())
      return invalid_argument("--shape ", o.name, ": rank ", o.dims.size(), " but the model's input has rank ",
                              input.shape.size());
    for (size_t i = 0; i < o.dims.size(); ++i)
      if (input.shape[i] >= 0 && input.shape[i] != o.dims[i])
        return invalid_argument("--shape ", o.name, ": dim ", i, " is ", o.dims[i],
                                " but the model fixes it to ", input.shape[i]);
    return o.dims;
  }
  std::vector<int64_t> shape = input.shape;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 0) continue;
    if (i == 0 && batch_size > 0) {
      shape[i] = batch_size;
      continue;
    }
    return invalid_argument("input '", input.name, "' has a variable dimension ", i,
                            "; give its shape with --shape ", input.name, "=D1,D2,...");
  }
  return shape;
}

}  // namespace osprey::loadgen
