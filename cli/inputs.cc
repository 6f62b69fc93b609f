#include "inputs.h"

#include "format.h"
#include "osprey/npy.h"

namespace osprey::cli {
namespace {

std::string input_names(const std::vector<TensorInfo>& declared) {
  if (declared.empty()) return "the model has no inputs";
  std::string s = "model inputs: ";
  for (size_t i = 0; i < declared.size(); ++i) s += (i ? ", " : "") + declared[i].name;
  return s;
}

template <class V>
const V* find(const std::vector<std::pair<std::string, V>>& kv, const std::string& name) {
  for (const auto& [k, v] : kv)
    if (k == name) return &v;
  return nullptr;
}

std::string dims(const Shape& shape) {
  if (shape.empty()) return "(scalar)";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "x" : "") + std::to_string(shape[i]);
  return s;
}

// Does `shape` fit the declaration (same rank, equal fixed dims)?
bool fits(const TensorInfo& info, const Shape& shape) {
  if (!info.has_shape) return true;
  if (info.shape.size() != shape.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i)
    if (info.shape[i].is_fixed() && info.shape[i].value != shape[i]) return false;
  return true;
}

}  // namespace

Result<Shape> resolve_shape(const TensorInfo& info, const Shape* override_shape, int64_t batch, bool* batch_applied) {
  *batch_applied = false;
  if (override_shape) {
    if (!fits(info, *override_shape))
      return invalid_argument("--shape ", info.name, "=", dims(*override_shape),
                              " does not match the declared ", info.name, ": ", format_info(info));
    return *override_shape;
  }
  if (!info.has_shape)
    return invalid_argument("input '", info.name, "' declares no shape; give one with --shape ", info.name,
                            "=DIMS (e.g. 1x3x224x224)");
  Shape shape;
  for (size_t i = 0; i < info.shape.size(); ++i) {
    const Dim& d = info.shape[i];
    if (d.is_fixed()) {
      shape.push_back(d.value);
    } else if (i == 0 && batch > 0) {
      shape.push_back(batch);
      *batch_applied = true;
    } else {
      shape.push_back(1);
    }
  }
  return shape;
}

Result<std::vector<PreparedInput>> prepare_inputs(const std::vector<TensorInfo>& declared, const InputSpec& spec) {
  auto known = [&](const std::string& name) {
    for (const auto& d : declared)
      if (d.name == name) return true;
    return false;
  };
  for (const auto& [name, path] : spec.files)
    if (!known(name)) return not_found("--input ", name, "=", path, ": the model has no input '", name, "' (", input_names(declared), ")");
  for (const auto& [name, shape] : spec.shapes)
    if (!known(name)) return not_found("--shape ", name, ": the model has no input '", name, "' (", input_names(declared), ")");

  std::vector<PreparedInput> out;
  for (const TensorInfo& info : declared) {
    if (info.is_sequence)
      return unimplemented("input '", info.name, "' is a sequence (", format_info(info),
                           "); osprey run/bench feed tensor inputs only");
    PreparedInput in;
    in.name = info.name;
    const Shape* override_shape = find(spec.shapes, info.name);
    if (const std::string* path = find(spec.files, info.name)) {
      NpyReadOptions ro;
      ro.max_elements = spec.generator.max_elements;
      auto t = read_npy(*path, ro);
      if (!t.ok()) return t.status().with_context("--input " + info.name);
      if (info.dtype != DType::kUndefined && t->dtype() != info.dtype)
        return invalid_argument("--input ", info.name, ": ", *path, " holds ", dtype_name(t->dtype()),
                                " data but the model declares ", info.name, ": ", format_info(info));
      if (!fits(info, t->shape()))
        return invalid_argument("--input ", info.name, ": ", *path, " has shape ", shape_to_string(t->shape()),
                                " but the model declares ", info.name, ": ", format_info(info));
      if (override_shape && *override_shape != t->shape())
        return invalid_argument("--input ", info.name, ": ", *path, " has shape ", shape_to_string(t->shape()),
                                " but --shape says ", shape_to_string(*override_shape));
      in.tensor = std::move(t).value();
      in.source = "file " + *path;
    } else {
      if (info.dtype == DType::kString)
        return unimplemented("input '", info.name, "' is a string tensor; osprey cannot generate or read strings");
      OSPREY_ASSIGN_OR_RETURN(Shape shape, resolve_shape(info, override_shape, spec.batch, &in.batch_applied));
      const uint64_t seed = input_seed(spec.seed, info.name);
      auto t = random_tensor(info.dtype, shape, seed, spec.generator);
      if (!t.ok()) return t.status().with_context("input " + info.name);
      in.tensor = std::move(t).value();
      in.source = std::string("random ") +
                  (dtype_is_float(info.dtype) ? distribution_name(spec.generator.distribution) : "") +
                  (dtype_is_float(info.dtype) ? ", " : "") + "seed " + std::to_string(spec.seed);
    }
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace osprey::cli
