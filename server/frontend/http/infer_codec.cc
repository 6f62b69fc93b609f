// Request decoding. Response encoding lives in infer_response_codec.cc.
#include "frontend/http/infer_codec.h"

#include <rapidjson/error/en.h>

#include <charconv>
#include <set>
#include <utility>
#include <vector>

#include "frontend/http/http_types.h"
#include "frontend/http/json_params.h"
#include "frontend/http/tensor_json.h"

namespace osprey::server::http {
namespace {

// Iterative parsing: deeply nested JSON cannot overflow the stack. Numbers use RapidJSON's
// normal-precision strtod: its full-precision path (1.1.0, Debian's) computes
// __builtin_clzll(0) for some inputs (found by fuzz_http_infer_request). Normal precision is
// within a few ULP of the exact double, so FP32 data rounds to the same float; clients that
// need bit-exact FP64 send the binary tensor extension, as Triton's clients do by default.
constexpr auto kParseFlags = rapidjson::kParseIterativeFlag;

struct BinaryInput {
  size_t input_index;
  uint64_t size;
  int64_t numel;
};

Result<std::string> string_member(const rapidjson::Value& obj, const char* key,
                                  const std::string& where) {
  const rapidjson::Value* v = find_member(obj, key);
  if (!v) return invalid_argument(where, ": missing '", key, "'");
  if (!v->IsString())
    return invalid_argument(where, ": '", key, "' must be a string, got ", json_type_name(*v));
  return std::string(v->GetString(), v->GetStringLength());
}

Status parse_shape(const rapidjson::Value& obj, const std::string& where,
                   std::vector<int64_t>* shape) {
  const rapidjson::Value* dims = find_member(obj, "shape");
  if (!dims) return invalid_argument(where, ": missing 'shape'");
  if (!dims->IsArray())
    return invalid_argument(where, ": 'shape' must be an array, got ", json_type_name(*dims));
  for (const auto& d : dims->GetArray()) {
    if (!d.IsInt64())
      return invalid_argument(where, ": shape dim ", shape->size(), " must be an integer");
    if (d.GetInt64() < 0)
      return invalid_argument(where, ": shape dim ", shape->size(), " is negative (",
                              d.GetInt64(), ")");
    shape->push_back(d.GetInt64());
  }
  return Status::Ok();
}

Status reject_shared_memory(const Parameters& params, const std::string& where) {
  if (params.count("shared_memory_region"))
    return unimplemented(where, ": shared memory tensors are not supported");
  return Status::Ok();
}

// Parses one input; binary inputs are recorded in `binary` and filled from the tail later.
Status parse_input(const rapidjson::Value& json, size_t index, int64_t max_elements,
                   WireTensor* t, std::vector<BinaryInput>* binary) {
  if (!json.IsObject())
    return invalid_argument("input ", index, ": must be an object, got ", json_type_name(json));
  std::string at = str_cat("input ", index);
  OSPREY_ASSIGN_OR_RETURN(t->name, string_member(json, "name", at));
  if (t->name.empty()) return invalid_argument(at, ": 'name' is empty");
  const std::string where = str_cat("input '", t->name, "'");
  OSPREY_ASSIGN_OR_RETURN(t->datatype, string_member(json, "datatype", where));
  if (!is_known_datatype(t->datatype))
    return invalid_argument(where, ": unknown datatype '", t->datatype, "'");
  OSPREY_RETURN_IF_ERROR(parse_shape(json, where, &t->shape));
  if (const rapidjson::Value* p = find_member(json, "parameters"))
    OSPREY_RETURN_IF_ERROR(parse_parameters(*p, where, &t->parameters));
  OSPREY_RETURN_IF_ERROR(reject_shared_memory(t->parameters, where));
  OSPREY_ASSIGN_OR_RETURN(int64_t numel, checked_numel(t->shape, max_elements, where));

  std::optional<uint64_t> binary_size;
  if (auto b = t->parameters.find("binary_data_size"); b != t->parameters.end()) {
    const int64_t* n = std::get_if<int64_t>(&b->second);
    if (!n || *n < 0)
      return invalid_argument(where, ": parameter 'binary_data_size' must be a non-negative integer");
    binary_size = static_cast<uint64_t>(*n);
    t->parameters.erase(b);  // a transport detail, not a model parameter
  }
  const rapidjson::Value* data = find_member(json, "data");
  const bool has_data = data != nullptr;
  if (has_data && binary_size)
    return invalid_argument(where, ": has both 'data' and parameters.binary_data_size");
  if (binary_size) {
    binary->push_back({index, *binary_size, numel});
    return Status::Ok();
  }
  if (!has_data)
    return invalid_argument(where, ": has neither 'data' nor parameters.binary_data_size");
  const int max_depth = t->shape.empty() ? 1 : static_cast<int>(t->shape.size());
  return json_to_raw(*data, t->datatype, numel, max_depth, where, &t->data);
}

Status parse_output(const rapidjson::Value& json, size_t index, RequestedOutput* out) {
  if (!json.IsObject())
    return invalid_argument("requested output ", index, ": must be an object, got ",
                            json_type_name(json));
  OSPREY_ASSIGN_OR_RETURN(out->name, string_member(json, "name", str_cat("requested output ", index)));
  if (out->name.empty()) return invalid_argument("requested output ", index, ": 'name' is empty");
  const std::string where = str_cat("requested output '", out->name, "'");
  if (const rapidjson::Value* p = find_member(json, "parameters"))
    OSPREY_RETURN_IF_ERROR(parse_parameters(*p, where, &out->parameters));
  OSPREY_RETURN_IF_ERROR(reject_shared_memory(out->parameters, where));
  OSPREY_ASSIGN_OR_RETURN(bool binary, bool_parameter(out->parameters, "binary_data", false, where));
  (void)binary;
  if (auto c = out->parameters.find("classification"); c != out->parameters.end()) {
    const int64_t* k = std::get_if<int64_t>(&c->second);
    if (!k || *k < 1)
      return invalid_argument(where, ": parameter 'classification' must be a positive integer");
  }
  return Status::Ok();
}

// Takes the binary inputs' bytes from body[offset..], in order, and checks nothing is left.
Status fill_binary_inputs(std::string& body, size_t offset, bool has_header,
                          const std::vector<BinaryInput>& binary, InferRequest* req) {
  for (size_t i = 0; i < binary.size(); ++i) {
    const BinaryInput& b = binary[i];
    WireTensor& t = req->inputs[b.input_index];
    const std::string where = str_cat("input '", t.name, "'");
    const size_t remaining = body.size() - offset;
    if (b.size > remaining)
      return invalid_argument(where, ": binary_data_size ", b.size, " exceeds the ", remaining,
                              " bytes left in the body",
                              has_header ? " (truncated binary data)"
                                         : " (no Inference-Header-Content-Length header)");
    const int64_t elem = datatype_size(t.datatype);
    if (elem > 0 && b.size != static_cast<uint64_t>(b.numel * elem))
      return invalid_argument(where, ": binary_data_size ", b.size, " does not match shape ",
                              shape_string(t.shape), " of ", t.datatype, " (", b.numel * elem,
                              " bytes)");
    std::string_view raw(body.data() + offset, b.size);
    if (elem == 0) OSPREY_RETURN_IF_ERROR(check_raw_bytes(raw, b.numel, where));
    const bool last = i + 1 == binary.size() && offset + b.size == body.size();
    if (last && b.size > 4096) {
      body.erase(0, offset);  // keep the buffer: no second allocation of a large tensor
      t.data = std::move(body);
      return Status::Ok();
    }
    t.data.assign(raw);
    offset += b.size;
  }
  if (offset != body.size())
    return invalid_argument("request body has ", body.size() - offset,
                            " unexpected trailing bytes after the JSON",
                            binary.empty() ? "" : " and binary input data");
  return Status::Ok();
}

}  // namespace

Result<uint64_t> parse_header_length(const std::string& value) {
  uint64_t n = 0;
  const char* end = value.data() + value.size();
  auto [p, ec] = std::from_chars(value.data(), end, n);
  if (value.empty() || ec != std::errc() || p != end)
    return invalid_argument("header ", kInferHeaderContentLength, " must be a byte count, got '",
                            value, "'");
  return n;
}

Result<InferRequest> decode_infer_request(std::string body, std::optional<uint64_t> json_length,
                                          int64_t max_tensor_elements) {
  size_t json_size = body.size();
  if (json_length) {
    if (*json_length > body.size())
      return invalid_argument(kInferHeaderContentLength, " (", *json_length,
                              ") exceeds the request body size (", body.size(), ")");
    json_size = static_cast<size_t>(*json_length);
  }
  if (json_size == 0) return invalid_argument("inference request has no JSON body");
  rapidjson::Document doc;
  doc.Parse<kParseFlags>(body.data(), json_size);
  if (doc.HasParseError())
    return invalid_argument("malformed JSON in inference request at offset ",
                            doc.GetErrorOffset(), ": ", rapidjson::GetParseError_En(doc.GetParseError()));
  if (!doc.IsObject())
    return invalid_argument("inference request must be a JSON object, got ", json_type_name(doc));

  InferRequest req;
  if (const rapidjson::Value* id = find_member(doc, "id")) {
    if (!id->IsString())
      return invalid_argument("request 'id' must be a string, got ", json_type_name(*id));
    req.id.assign(id->GetString(), id->GetStringLength());
  }
  if (const rapidjson::Value* p = find_member(doc, "parameters"))
    OSPREY_RETURN_IF_ERROR(parse_parameters(*p, "request", &req.parameters));
  OSPREY_RETURN_IF_ERROR(
      bool_parameter(req.parameters, "binary_data_output", false, "request").status());

  const rapidjson::Value* inputs = find_member(doc, "inputs");
  if (!inputs) return invalid_argument("inference request has no 'inputs'");
  if (!inputs->IsArray())
    return invalid_argument("'inputs' must be an array, got ", json_type_name(*inputs));
  std::vector<BinaryInput> binary;
  std::set<std::string> names;
  req.inputs.resize(inputs->Size());
  for (rapidjson::SizeType i = 0; i < inputs->Size(); ++i) {
    OSPREY_RETURN_IF_ERROR(
        parse_input((*inputs)[i], i, max_tensor_elements, &req.inputs[i], &binary));
    if (!names.insert(req.inputs[i].name).second)
      return invalid_argument("input '", req.inputs[i].name, "' appears more than once");
  }

  if (const rapidjson::Value* outputs = find_member(doc, "outputs")) {
    if (!outputs->IsArray())
      return invalid_argument("'outputs' must be an array, got ", json_type_name(*outputs));
    names.clear();
    req.outputs.resize(outputs->Size());
    for (rapidjson::SizeType i = 0; i < outputs->Size(); ++i) {
      OSPREY_RETURN_IF_ERROR(parse_output((*outputs)[i], i, &req.outputs[i]));
      if (!names.insert(req.outputs[i].name).second)
        return invalid_argument("requested output '", req.outputs[i].name,
                                "' appears more than once");
    }
  }
  OSPREY_RETURN_IF_ERROR(
      fill_binary_inputs(body, json_size, json_length.has_value(), binary, &req));
  return req;
}

}  // namespace osprey::server::http
