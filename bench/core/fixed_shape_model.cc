#include "core/fixed_shape_model.h"

#include <fstream>
#include <sstream>

#include "osprey_onnx/onnx.pb.h"

namespace osprey::bench {
namespace {

bool has_external_data(const onnx::GraphProto& g) {
  for (const auto& t : g.initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return true;
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.has_t() && a.t().data_location() == onnx::TensorProto::EXTERNAL) return true;
      if (a.has_g() && has_external_data(a.g())) return true;
      for (const auto& sub : a.graphs())
        if (has_external_data(sub)) return true;
    }
  return false;
}

std::string dim_text(const onnx::TensorShapeProto::Dimension& d) {
  if (d.has_dim_value()) return std::to_string(d.dim_value());
  if (d.has_dim_param() && !d.dim_param().empty()) return d.dim_param();
  return "?";
}

std::string shape_text(const Shape& s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i) t += (i ? "," : "") + std::to_string(s[i]);
  return t + "]";
}

// Fixes one declared input to `shape`; appends what changed to *changes.
Status fix_input(onnx::ValueInfoProto* v, const Shape& shape, std::string* changes) {
  if (!v->type().has_tensor_type())
    return invalid_argument("input '", v->name(), "' is not a tensor, so it has no shape to fix");
  auto* tt = v->mutable_type()->mutable_tensor_type();
  std::string change;
  if (!tt->has_shape()) {
    change = "unknown rank -> " + shape_text(shape);
  } else {
    const auto& dims = tt->shape().dim();
    if (static_cast<size_t>(dims.size()) != shape.size())
      return invalid_argument("input '", v->name(), "' is declared with rank ", dims.size(),
                              ", the cell's shape ", shape_text(shape), " has rank ", shape.size());
    for (size_t i = 0; i < shape.size(); ++i) {
      const auto& d = dims[static_cast<int>(i)];
      if (d.has_dim_value() && d.dim_value() != shape[i])
        return invalid_argument("input '", v->name(), "' dim ", i, " is fixed to ", d.dim_value(),
                                ", the cell's shape ", shape_text(shape), " has ", shape[i]);
      if (!d.has_dim_value())
        change += (change.empty() ? "" : ", ") + dim_text(d) + " -> " + std::to_string(shape[i]);
    }
  }
  if (change.empty()) return Status::Ok();
  auto* s = tt->mutable_shape();
  s->clear_dim();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
  *changes += (changes->empty() ? "" : "; ") + v->name() + ": " + change;
  return Status::Ok();
}

}  // namespace

Result<FixedShapeModel> write_fixed_shape_model(const std::string& model_path,
                                                const std::vector<InputDesc>& inputs,
                                                const std::string& out_path) {
  std::ifstream in(model_path, std::ios::binary);
  if (!in) return not_found("cannot read model ", model_path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes.str()))
    return invalid_argument(model_path, " is not a valid ONNX model");
  auto* graph = model.mutable_graph();
  std::string changes;
  for (const auto& desc : inputs) {
    onnx::ValueInfoProto* declared = nullptr;
    for (auto& v : *graph->mutable_input())
      if (v.name() == desc.name) declared = &v;
    if (!declared)
      return invalid_argument(model_path, " declares no graph input named '", desc.name, "'");
    OSPREY_RETURN_IF_ERROR(fix_input(declared, desc.shape, &changes));
  }
  FixedShapeModel result;
  if (changes.empty()) {
    result.path = model_path;
    result.note = "fixed shapes: the model's inputs already have these shapes, so it runs as given";
    return result;
  }
  if (has_external_data(*graph))
    return unimplemented(model_path,
                         " keeps tensors in external data files; a fixed-shape copy of it is not "
                         "supported (run it with --shape-mode dynamic)");
  std::ofstream out(out_path, std::ios::binary | std::ios::trunc);
  if (!out || !model.SerializeToOstream(&out))
    return invalid_argument("cannot write the fixed-shape copy ", out_path);
  out.close();
  if (!out) return invalid_argument("cannot write the fixed-shape copy ", out_path);
  result.path = out_path;
  result.copied = true;
  result.note = "fixed shapes: runs the copy " + out_path + " whose graph inputs are fixed (" +
                changes + "); value_info and outputs keep their symbolic dims";
  return result;
}

}  // namespace osprey::bench
