#include "core/request_validator.h"

#include <set>

#include "core/datatype.h"
#include "osprey/tensor.h"
#include "processing/bytes_elements.h"

namespace osprey::server {
namespace {

const inference::ModelInput* find_input(const inference::ModelConfig& c, const std::string& name) {
  for (const auto& in : c.input())
    if (in.name() == name) return &in;
  return nullptr;
}

bool has_output(const inference::ModelConfig& c, const std::string& name) {
  for (const auto& out : c.output())
    if (out.name() == name) return true;
  return false;
}

}  // namespace

Result<RequestShape> validate_request(const InferRequest& request,
                                      const inference::ModelConfig& config,
                                      int64_t max_tensor_elements) {
  RequestShape out;
  const bool batching = config.max_batch_size() > 0;
  int64_t batch = -1;
  std::set<std::string> seen;
  for (const auto& t : request.inputs) {
    std::string what = str_cat("input '", t.name, "'");
    const inference::ModelInput* in = find_input(config, t.name);
    if (!in) return invalid_argument(what, ": model '", config.name(), "' has no such input");
    if (!seen.insert(t.name).second) return invalid_argument(what, ": given twice");
    std::string expected = wire_datatype(in->data_type());
    if (t.datatype != expected)
      return invalid_argument(what, ": datatype ", t.datatype, " but the model expects ", expected);
    const bool bytes_input = t.datatype == "BYTES";
    const size_t rank = static_cast<size_t>(in->dims_size()) + (batching ? 1 : 0);
    if (t.shape.size() != rank)
      return invalid_argument(what, ": shape ", shape_to_string(t.shape), " has rank ",
                              t.shape.size(), " but the model expects rank ", rank,
                              batching ? " (batch dim first)" : "");
    for (int64_t d : t.shape)
      if (d < 0) return invalid_argument(what, ": shape ", shape_to_string(t.shape), " has a negative dim");
    for (int i = 0; i < in->dims_size(); ++i) {
      int64_t want = in->dims(i), got = t.shape[static_cast<size_t>(i) + (batching ? 1 : 0)];
      if (want >= 0 && want != got)
        return invalid_argument(what, ": shape ", shape_to_string(t.shape), " but the model expects ",
                                want, " at dim ", i + (batching ? 1 : 0));
    }
    int64_t numel = shape_numel(t.shape);
    if (numel < 0 || numel > max_tensor_elements)
      return invalid_argument(what, ": shape ", shape_to_string(t.shape), " is over the limit of ",
                              max_tensor_elements, " elements");
    if (bytes_input) {
      auto framed = processing::split_bytes_elements(t.data, numel);
      if (!framed.ok()) return invalid_argument(what, ": ", framed.status().message());
    }
    int64_t bytes = numel * config_datatype_size(in->data_type());
    if (!bytes_input && static_cast<int64_t>(t.data.size()) != bytes)
      return invalid_argument(what, ": ", t.data.size(), " bytes of data but shape ",
                              shape_to_string(t.shape), " of ", t.datatype, " needs ", bytes);
    if (batching) {
      if (batch >= 0 && t.shape[0] != batch)
        return invalid_argument(what, ": batch size ", t.shape[0], " differs from the other inputs' ",
                                batch);
      batch = t.shape[0];
    }
    out.shape_key += t.name;
    for (size_t i = batching ? 1 : 0; i < t.shape.size(); ++i) out.shape_key += str_cat(",", t.shape[i]);
    out.shape_key += ";";
  }
  for (const auto& in : config.input())
    if (!in.optional() && !seen.count(in.name()))
      return invalid_argument("input '", in.name(), "' is required by model '", config.name(),
                              "' but missing from the request");
  for (const auto& o : request.outputs)
    if (!has_output(config, o.name))
      return invalid_argument("output '", o.name, "': model '", config.name(), "' has no such output");
  if (batching) {
    if (batch < 1 && !request.inputs.empty())
      return invalid_argument("batch size ", batch, " must be at least 1");
    if (batch > config.max_batch_size())
      return invalid_argument("batch size ", batch, " is over the model's max_batch_size ",
                              config.max_batch_size());
    out.batch_size = batch < 1 ? 1 : batch;
  }
  return out;
}

}  // namespace osprey::server
