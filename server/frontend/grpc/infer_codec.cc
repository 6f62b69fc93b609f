#include "frontend/grpc/infer_codec.h"

#include <limits>
#include <utility>
#include <variant>

#include "frontend/grpc/tensor_contents.h"

namespace osprey::server::grpc_frontend {
namespace {

std::string quoted(const std::string& kind, const std::string& name) {
  return kind + " '" + name + "'";
}

// The well-known parameters must have the type the server reads them as.
Status check_int_param(const Parameters& params, const std::string& key, int64_t min_value,
                       const std::string& owner) {
  auto it = params.find(key);
  if (it == params.end()) return Status::Ok();
  const int64_t* v = std::get_if<int64_t>(&it->second);
  if (v == nullptr) return invalid_argument(owner, ": parameter '", key, "' must be an integer");
  if (*v < min_value)
    return invalid_argument(owner, ": parameter '", key, "' must be >= ", min_value, ", got ", *v);
  return Status::Ok();
}

Status check_bool_param(const Parameters& params, const std::string& key,
                        const std::string& owner) {
  auto it = params.find(key);
  if (it != params.end() && !std::holds_alternative<bool>(it->second))
    return invalid_argument(owner, ": parameter '", key, "' must be a bool");
  return Status::Ok();
}

Result<WireTensor> decode_input(inference::ModelInferRequest::InferInputTensor& input,
                                std::string* raw, const ServerLimits& limits, int index) {
  if (input.name().empty()) return invalid_argument("input ", index, " has no name");
  const std::string tensor = quoted("input", input.name());
  WireTensor out;
  out.name = input.name();
  out.datatype = input.datatype();
  if (!is_known_datatype(out.datatype))
    return invalid_argument(tensor, ": unknown datatype '", out.datatype, "'");
  out.shape.assign(input.shape().begin(), input.shape().end());
  OSPREY_ASSIGN_OR_RETURN(const int64_t elements,
                          checked_element_count(out.shape, limits.max_tensor_elements, tensor));
  OSPREY_ASSIGN_OR_RETURN(out.parameters, decode_parameters(input.parameters(), tensor));
  if (raw != nullptr) {
    if (input.has_contents() && has_typed_values(input.contents()))
      return invalid_argument(tensor,
                              ": both raw_input_contents and typed contents given; use one");
    OSPREY_RETURN_IF_ERROR(check_raw_contents(*raw, out.datatype, elements, tensor));
    out.data.swap(*raw);
    return out;
  }
  if (!input.has_contents() || !has_typed_values(input.contents())) {
    if (elements == 0) return out;
    return invalid_argument(tensor,
                            ": no data (neither raw_input_contents nor typed contents given)");
  }
  OSPREY_ASSIGN_OR_RETURN(out.data,
                          typed_contents_to_raw(input.contents(), out.datatype, elements, tensor));
  input.clear_contents();
  return out;
}

}  // namespace

Result<Parameters> decode_parameters(const ProtoParameters& params, const std::string& owner) {
  Parameters out;
  for (const auto& [key, value] : params) {
    using P = inference::InferParameter;
    switch (value.parameter_choice_case()) {
      case P::kBoolParam: out.emplace(key, value.bool_param()); break;
      case P::kInt64Param: out.emplace(key, value.int64_param()); break;
      case P::kStringParam: out.emplace(key, value.string_param()); break;
      case P::kDoubleParam: out.emplace(key, value.double_param()); break;
      case P::kUint64Param:
        if (value.uint64_param() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
          return invalid_argument(owner, ": parameter '", key, "' = ", value.uint64_param(),
                                  " does not fit in int64");
        out.emplace(key, static_cast<int64_t>(value.uint64_param()));
        break;
      case P::PARAMETER_CHOICE_NOT_SET:
        return invalid_argument(owner, ": parameter '", key, "' has no value");
    }
  }
  return out;
}

void encode_parameters(const Parameters& params, ProtoParameters* out) {
  for (const auto& [key, value] : params) {
    inference::InferParameter& p = (*out)[key];
    std::visit(
        [&p](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>)
            p.set_bool_param(v);
          else if constexpr (std::is_same_v<T, int64_t>)
            p.set_int64_param(v);
          else if constexpr (std::is_same_v<T, double>)
            p.set_double_param(v);
          else
            p.set_string_param(v);
        },
        value);
  }
}

Result<InferRequest> decode_infer_request(inference::ModelInferRequest& message,
                                          const ServerLimits& limits) {
  InferRequest req;
  if (message.model_name().empty()) return invalid_argument("request has no model_name");
  req.model_name = message.model_name();
  req.model_version = message.model_version();
  req.id = message.id();
  OSPREY_ASSIGN_OR_RETURN(req.parameters, decode_parameters(message.parameters(), "request"));
  OSPREY_RETURN_IF_ERROR(check_int_param(req.parameters, "priority", 0, "request"));
  OSPREY_RETURN_IF_ERROR(check_int_param(req.parameters, "timeout", 0, "request"));
  OSPREY_RETURN_IF_ERROR(check_bool_param(req.parameters, "binary_data_output", "request"));

  const int n_inputs = message.inputs_size();
  const int n_raw = message.raw_input_contents_size();
  if (n_raw != 0 && n_raw != n_inputs)
    return invalid_argument("raw_input_contents has ", n_raw, " entries for ", n_inputs,
                            " inputs; send one per input, in input order");
  req.inputs.reserve(n_inputs);
  for (int i = 0; i < n_inputs; ++i) {
    std::string* raw = n_raw ? message.mutable_raw_input_contents(i) : nullptr;
    OSPREY_ASSIGN_OR_RETURN(WireTensor t, decode_input(*message.mutable_inputs(i), raw, limits, i));
    for (const WireTensor& prev : req.inputs)
      if (prev.name == t.name) return invalid_argument("input '", t.name, "' is given twice");
    req.inputs.push_back(std::move(t));
  }

  req.outputs.reserve(message.outputs_size());
  for (const auto& o : message.outputs()) {
    if (o.name().empty()) return invalid_argument("a requested output has no name");
    const std::string owner = quoted("output", o.name());
    RequestedOutput out;
    out.name = o.name();
    OSPREY_ASSIGN_OR_RETURN(out.parameters, decode_parameters(o.parameters(), owner));
    OSPREY_RETURN_IF_ERROR(check_int_param(out.parameters, "classification", 1, owner));
    OSPREY_RETURN_IF_ERROR(check_bool_param(out.parameters, "binary_data", owner));
    req.outputs.push_back(std::move(out));
  }
  return req;
}

void encode_infer_response(InferResponse&& response, inference::ModelInferResponse* out) {
  out->set_model_name(std::move(response.model_name));
  out->set_model_version(std::move(response.model_version));
  out->set_id(std::move(response.id));
  encode_parameters(response.parameters, out->mutable_parameters());
  out->mutable_outputs()->Reserve(static_cast<int>(response.outputs.size()));
  out->mutable_raw_output_contents()->Reserve(static_cast<int>(response.outputs.size()));
  for (WireTensor& t : response.outputs) {
    auto* o = out->add_outputs();
    o->set_name(std::move(t.name));
    o->set_datatype(std::move(t.datatype));
    o->mutable_shape()->Add(t.shape.begin(), t.shape.end());
    encode_parameters(t.parameters, o->mutable_parameters());
    out->add_raw_output_contents()->swap(t.data);
  }
}

}  // namespace osprey::server::grpc_frontend
