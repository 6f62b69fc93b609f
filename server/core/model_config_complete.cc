#include "core/model_config_complete.h"

#include <set>
#include <string>

#include "core/datatype.h"

namespace osprey::server {
namespace {

using inference::ModelConfig;

const TensorInfo* find_info(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const auto& info : infos)
    if (info.name == name) return &info;
  return nullptr;
}

// The model's dims as config dims (-1 for symbolic), with the batch dim removed when batching.
Result<std::vector<int64_t>> config_dims(const std::string& what, const TensorInfo& info,
                                         int max_batch_size) {
  if (info.is_sequence) return unimplemented(what, ": sequence types are not served");
  if (!info.has_shape)
    return invalid_argument(what, ": the model declares no shape; give its dims in config.pbtxt");
  std::vector<int64_t> dims;
  for (const Dim& d : info.shape) dims.push_back(d.is_fixed() ? d.value : -1);
  if (max_batch_size > 0) {
    if (dims.empty())
      return invalid_argument(what, ": the model declares a scalar but max_batch_size ",
                              max_batch_size, " needs a batch dim");
    if (dims[0] >= 0 && !(dims[0] == 1 && max_batch_size == 1))
      return invalid_argument(what, ": the model's first dim is fixed at ", dims[0],
                              "; max_batch_size ", max_batch_size,
                              " needs a dynamic batch dim (or set max_batch_size 0)");
    dims.erase(dims.begin());
  }
  return dims;
}

template <class T>
Status check_declared(const std::string& what, const T& declared, const TensorInfo& info,
                      int max_batch_size) {
  inference::DataType model_type = config_datatype(info.dtype);
  if (model_type == inference::TYPE_INVALID)
    return unimplemented(what, ": the model's element type ", dtype_name(info.dtype),
                         " is not served");
  if (declared.data_type() != model_type)
    return invalid_argument(what, ": data_type ", inference::DataType_Name(declared.data_type()),
                            " does not match the model's ", inference::DataType_Name(model_type));
  if (!info.has_shape) return Status::Ok();  // nothing to compare against
  OSPREY_ASSIGN_OR_RETURN(std::vector<int64_t> model_dims, config_dims(what, info, max_batch_size));
  // With a reshape, the backend sees reshape.shape; compare that against the model.
  std::vector<int64_t> dims(declared.dims().begin(), declared.dims().end());
  if (declared.has_reshape())
    dims.assign(declared.reshape().shape().begin(), declared.reshape().shape().end());
  if (dims.size() != model_dims.size())
    return invalid_argument(what, ": ", dims.size(), " dims", declared.has_reshape() ? " (reshape)" : "",
                            " but the model has ", model_dims.size(),
                            max_batch_size > 0 ? " (not counting the batch dim)" : "");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] >= 0 && model_dims[i] >= 0 && dims[i] != model_dims[i])
      return invalid_argument(what, ": dim ", i, " is ", dims[i], " but the model has ",
                              model_dims[i]);
  return Status::Ok();
}

template <class T>
Status fill_from_model(const std::string& kind, const TensorInfo& info, int max_batch_size, T* out) {
  std::string what = str_cat(kind, " '", info.name, "'");
  inference::DataType type = config_datatype(info.dtype);
  if (type == inference::TYPE_INVALID)
    return unimplemented(what, ": the model's element type ", dtype_name(info.dtype),
                         " is not served");
  std::vector<int64_t> dims = {-1};  // an output without a declared shape: rank unknown
  if (kind == "input" || info.has_shape) {
    OSPREY_ASSIGN_OR_RETURN(dims, config_dims(what, info, max_batch_size));
  }
  out->set_name(info.name);
  out->set_data_type(type);
  for (int64_t d : dims) out->add_dims(d);
  return Status::Ok();
}

}  // namespace

Status complete_model_config(const std::vector<TensorInfo>& model_inputs,
                             const std::vector<TensorInfo>& model_outputs, ModelConfig* config) {
  ModelConfig& c = *config;
  const int mbs = c.max_batch_size();
  if (c.input_size() == 0) {
    for (const auto& info : model_inputs)
      OSPREY_RETURN_IF_ERROR(fill_from_model("input", info, mbs, c.add_input()));
  } else {
    std::set<std::string> declared;
    for (const auto& in : c.input()) {
      std::string what = str_cat("input '", in.name(), "'");
      const TensorInfo* info = find_info(model_inputs, in.name());
      if (!info) return not_found(what, " is declared in config.pbtxt but the model has no such input");
      if (in.optional() && !info->is_optional)
        return invalid_argument(what, ": marked optional but the model requires it");
      OSPREY_RETURN_IF_ERROR(check_declared(what, in, *info, mbs));
      declared.insert(in.name());
    }
    for (const auto& info : model_inputs)
      if (!declared.count(info.name))
        return invalid_argument("model input '", info.name, "' is missing from config.pbtxt");
  }
  if (c.output_size() == 0) {
    for (const auto& info : model_outputs)
      OSPREY_RETURN_IF_ERROR(fill_from_model("output", info, mbs, c.add_output()));
  } else {
    for (const auto& out : c.output()) {
      std::string what = str_cat("output '", out.name(), "'");
      const TensorInfo* info = find_info(model_outputs, out.name());
      if (!info) return not_found(what, " is declared in config.pbtxt but the model has no such output");
      OSPREY_RETURN_IF_ERROR(check_declared(what, out, *info, mbs));
    }
  }
  return Status::Ok();
}

}  // namespace osprey::server
