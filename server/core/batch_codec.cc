#include "core/batch_codec.h"

#include <cstring>

#include "core/datatype.h"
#include "processing/bytes_elements.h"

namespace osprey::server {

Result<Shape> resolve_dims(const std::vector<int64_t>& dims, int64_t numel) {
  Shape out(dims.begin(), dims.end());
  int64_t known = 1;
  int unknown = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] < 0) {
      if (unknown >= 0) return invalid_argument("shape ", shape_to_string(out), " has two -1 dims");
      unknown = static_cast<int>(i);
    } else {
      known *= out[i];
    }
  }
  if (unknown >= 0) {
    if (known == 0 || numel % known != 0)
      return invalid_argument(numel, " elements do not fit shape ", shape_to_string(out));
    out[static_cast<size_t>(unknown)] = numel / known;
  } else if (known != numel) {
    return invalid_argument(numel, " elements do not fit shape ", shape_to_string(out));
  }
  return out;
}

namespace {

// BYTES parts (each element a 4-byte little-endian length, then its bytes) into the string
// elements of `t`, in order.
Result<Tensor> gather_strings(const std::vector<const WireTensor*>& parts,
                              const inference::ModelInput& config, Tensor t) {
  auto* dst = t.data<std::string>();
  int64_t at = 0;
  for (const WireTensor* p : parts) {
    const int64_t count = shape_numel(p->shape);
    if (count < 0 || at + count > t.numel())
      return internal_error("input '", config.name(), "': data does not match its shape");
    auto elements = processing::split_bytes_elements(p->data, count);
    if (!elements.ok()) return elements.status().with_context(str_cat("input '", config.name(), "'"));
    for (std::string_view e : *elements) dst[at++].assign(e.data(), e.size());
  }
  if (at != t.numel())
    return internal_error("input '", config.name(), "': data does not match its shape");
  return t;
}

// Rows [first, first + rows) of a string tensor as BYTES wire data.
std::string bytes_rows(const Tensor& tensor, int64_t first_element, int64_t count) {
  std::string out;
  const auto* src = tensor.data<std::string>();
  size_t total = 0;
  for (int64_t i = 0; i < count; ++i) total += 4 + src[first_element + i].size();
  out.reserve(total);
  for (int64_t i = 0; i < count; ++i) processing::append_bytes_element(src[first_element + i], &out);
  return out;
}

}  // namespace

Result<Tensor> gather_input(const std::vector<const WireTensor*>& parts,
                            const inference::ModelInput& config, bool batching,
                            int64_t max_elements) {
  if (parts.empty()) return internal_error("input '", config.name(), "': no data to gather");
  DType dtype = engine_dtype(config.data_type());
  const WireTensor& first = *parts[0];
  Shape shape = first.shape;
  if (batching) {
    shape[0] = 0;
    for (const WireTensor* p : parts) shape[0] += p->shape[0];
  } else if (parts.size() != 1) {
    return internal_error("input '", config.name(), "': ", parts.size(),
                          " requests in one execution of a model without batching");
  }
  if (config.has_reshape()) {
    Shape tail(shape.begin() + (batching ? 1 : 0), shape.end());
    std::vector<int64_t> want(config.reshape().shape().begin(), config.reshape().shape().end());
    auto resolved = resolve_dims(want, shape_numel(tail));
    if (!resolved.ok()) return resolved.status().with_context(str_cat("input '", config.name(), "' reshape"));
    Shape full = batching ? Shape{shape[0]} : Shape{};
    full.insert(full.end(), resolved->begin(), resolved->end());
    shape = std::move(full);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor t, Tensor::create(dtype, shape, max_elements));
  if (dtype == DType::kString) return gather_strings(parts, config, std::move(t));
  auto* dst = static_cast<char*>(t.raw_data());
  size_t offset = 0;
  for (const WireTensor* p : parts) {
    if (offset + p->data.size() > t.nbytes())
      return internal_error("input '", config.name(), "': data does not match its shape");
    if (!p->data.empty()) std::memcpy(dst + offset, p->data.data(), p->data.size());
    offset += p->data.size();
  }
  if (offset != t.nbytes())
    return internal_error("input '", config.name(), "': data does not match its shape");
  return t;
}

Result<std::vector<WireTensor>> split_output(const Tensor& tensor,
                                             const inference::ModelOutput& config, bool batching,
                                             const std::vector<int64_t>& batch_sizes) {
  const std::string what = str_cat("output '", config.name(), "'");
  inference::DataType type = config_datatype(tensor.dtype());
  if (type == inference::TYPE_INVALID)
    return unimplemented(what, ": element type ", dtype_name(tensor.dtype()), " is not served");
  if (type != config.data_type())
    return internal_error(what, ": the model produced ", dtype_name(tensor.dtype()),
                          " but the config says ", inference::DataType_Name(config.data_type()));
  int64_t total = 0;
  for (int64_t b : batch_sizes) total += b;
  if (batching && (tensor.rank() == 0 || tensor.dim(0) != total))
    return internal_error(what, ": shape ", shape_to_string(tensor.shape()),
                          " does not have the batch of ", total, " as its first dim");
  if (!batching && batch_sizes.size() != 1)
    return internal_error(what, ": several requests in one execution without batching");
  const int64_t rows = batching ? total : 1;
  const size_t row_bytes = rows == 0 ? 0 : tensor.nbytes() / static_cast<size_t>(rows);
  const int64_t row_elems = rows == 0 ? 0 : tensor.numel() / rows;
  std::vector<WireTensor> out;
  const char* src = static_cast<const char*>(tensor.raw_data());
  size_t offset = 0;
  int64_t element = 0;  // string tensors: the next element to send
  for (int64_t b : batch_sizes) {
    WireTensor w;
    w.name = config.name();
    w.datatype = wire_datatype(type);
    int64_t n = batching ? b : 1;
    if (batching) {
      w.shape = tensor.shape();
      w.shape[0] = b;
    } else {
      w.shape = tensor.shape();
    }
    if (config.has_reshape()) {
      std::vector<int64_t> dims(config.dims().begin(), config.dims().end());
      auto resolved = resolve_dims(dims, row_elems);
      if (!resolved.ok()) return resolved.status().with_context(what + " reshape");
      w.shape = batching ? Shape{b} : Shape{};
      w.shape.insert(w.shape.end(), resolved->begin(), resolved->end());
    }
    if (type == inference::TYPE_STRING) {
      const int64_t count = batching ? row_elems * n : tensor.numel();
      w.data = bytes_rows(tensor, element, count);
      element += count;
      out.push_back(std::move(w));
      continue;
    }
    size_t bytes = batching ? row_bytes * static_cast<size_t>(n) : tensor.nbytes();
    w.data.assign(src + offset, bytes);
    offset += bytes;
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace osprey::server
