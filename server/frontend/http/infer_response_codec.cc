// Response encoding: JSON, with binary outputs appended after it as Triton does.
#include <limits>
#include <utility>
#include <vector>

#include "frontend/http/infer_codec.h"
#include "frontend/http/json_params.h"
#include "frontend/http/tensor_json.h"

namespace osprey::server::http {

bool OutputEncoding::is_binary(const std::string& name) const {
  auto it = binary_by_name.find(name);
  return it == binary_by_name.end() ? binary_default : it->second;
}

Result<OutputEncoding> output_encoding_of(const InferRequest& request) {
  OutputEncoding enc;
  OSPREY_ASSIGN_OR_RETURN(enc.binary_default, bool_parameter(request.parameters,
                                                             "binary_data_output", false, "request"));
  for (const RequestedOutput& out : request.outputs) {
    if (!out.parameters.count("binary_data")) continue;
    OSPREY_ASSIGN_OR_RETURN(bool binary, bool_parameter(out.parameters, "binary_data", false,
                                                        str_cat("requested output '", out.name, "'")));
    enc.binary_by_name[out.name] = binary;
  }
  return enc;
}

Result<EncodedBody> encode_infer_response(const InferResponse& response,
                                          const OutputEncoding& encoding) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  w.Key("model_name");
  write_string(w, response.model_name);
  w.Key("model_version");
  write_string(w, response.model_version);
  if (!response.id.empty()) {
    w.Key("id");
    write_string(w, response.id);
  }
  if (!response.parameters.empty()) {
    w.Key("parameters");
    write_parameters(w, response.parameters);
  }
  w.Key("outputs");
  w.StartArray();
  std::vector<const WireTensor*> binary;
  size_t binary_bytes = 0;
  for (const WireTensor& out : response.outputs) {
    const std::string where = str_cat("output '", out.name, "'");
    OSPREY_ASSIGN_OR_RETURN(int64_t numel,
                            checked_numel(out.shape, std::numeric_limits<int64_t>::max(), where));
    const bool as_binary = encoding.is_binary(out.name);
    const int64_t elem = datatype_size(out.datatype);
    if (!is_known_datatype(out.datatype))
      return internal_error(where, ": unknown datatype '", out.datatype, "'");
    if (elem > 0 && static_cast<int64_t>(out.data.size()) != numel * elem)
      return internal_error(where, ": holds ", out.data.size(), " bytes but shape ",
                            shape_string(out.shape), " of ", out.datatype, " needs ", numel * elem);
    if (elem == 0) OSPREY_RETURN_IF_ERROR(check_raw_bytes(out.data, numel, where));
    w.StartObject();
    w.Key("name");
    write_string(w, out.name);
    w.Key("datatype");
    write_string(w, out.datatype);
    w.Key("shape");
    w.StartArray();
    for (int64_t d : out.shape) w.Int64(d);
    w.EndArray();
    if (as_binary) {
      Parameters params = out.parameters;
      params["binary_data_size"] = static_cast<int64_t>(out.data.size());
      w.Key("parameters");
      write_parameters(w, params);
      binary.push_back(&out);
      binary_bytes += out.data.size();
    } else {
      if (!out.parameters.empty()) {
        w.Key("parameters");
        write_parameters(w, out.parameters);
      }
      w.Key("data");
      OSPREY_RETURN_IF_ERROR(raw_to_json(out.data, out.datatype, numel, where, w));
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();

  EncodedBody encoded;
  encoded.body.reserve(buffer.GetSize() + binary_bytes);
  encoded.body.assign(buffer.GetString(), buffer.GetSize());
  if (!binary.empty()) {
    encoded.json_length = buffer.GetSize();
    for (const WireTensor* t : binary) encoded.body.append(t->data);
  }
  return encoded;
}

}  // namespace osprey::server::http
