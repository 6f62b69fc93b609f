// ModelProto -> ir::Graph, with validation and kernel resolution. Each tensor's payload is
// released from the proto as soon as it has been converted, so a model's weights are held twice
// only one tensor at a time.
#include <map>
#include <set>

#include "onnx/onnx_internal.h"

namespace osprey::onnx_import {

namespace {

using OpsetMap = std::map<std::string, int>;

std::string canonical_domain(const std::string& d) { return d == "ai.onnx" ? "" : d; }

struct Importer {
  const OpsetMap& opsets;
  std::string dir;
  int64_t max_elements;
  const std::vector<std::optional<RawDataInFile>>* raw_in_file;  // main graph's initializers

  Status import_attribute(onnx::AttributeProto& a, ir::Attribute* out);
  Status import_graph(onnx::GraphProto& g, ir::Graph* out, bool is_subgraph);
};

ir::Attribute::Type attribute_type(const onnx::AttributeProto& a) {
  using T = ir::Attribute::Type;
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT: return T::kFloat;
    case onnx::AttributeProto::INT: return T::kInt;
    case onnx::AttributeProto::STRING: return T::kString;
    case onnx::AttributeProto::TENSOR: return T::kTensor;
    case onnx::AttributeProto::GRAPH: return T::kGraph;
    case onnx::AttributeProto::FLOATS: return T::kFloats;
    case onnx::AttributeProto::INTS: return T::kInts;
    case onnx::AttributeProto::STRINGS: return T::kStrings;
    case onnx::AttributeProto::TENSORS: return T::kTensors;
    case onnx::AttributeProto::GRAPHS: return T::kGraphs;
    default: break;
  }
  // Old models may omit `type`: infer it from the field that is set.
  if (a.has_f()) return T::kFloat;
  if (a.has_i()) return T::kInt;
  if (a.has_s()) return T::kString;
  if (a.has_t()) return T::kTensor;
  if (a.has_g()) return T::kGraph;
  if (a.floats_size()) return T::kFloats;
  if (a.ints_size()) return T::kInts;
  if (a.strings_size()) return T::kStrings;
  if (a.tensors_size()) return T::kTensors;
  if (a.graphs_size()) return T::kGraphs;
  return T::kUndefined;
}

Status Importer::import_attribute(onnx::AttributeProto& a, ir::Attribute* out) {
  using T = ir::Attribute::Type;
  if (!a.ref_attr_name().empty())
    return unimplemented("attribute '", a.name(), "' refers to a function attribute");
  out->type = attribute_type(a);
  switch (out->type) {
    case T::kFloat: out->f = a.f(); break;
    case T::kInt: out->i = a.i(); break;
    case T::kString: out->s = a.s(); break;
    case T::kTensor: {
      OSPREY_ASSIGN_OR_RETURN(out->t, take_tensor_from_proto(a.mutable_t(), dir, max_elements));
      break;
    }
    case T::kGraph: {
      out->g = std::make_shared<ir::Graph>();
      OSPREY_RETURN_IF_ERROR(import_graph(*a.mutable_g(), out->g.get(), true));
      break;
    }
    case T::kFloats: out->floats.assign(a.floats().begin(), a.floats().end()); break;
    case T::kInts: out->ints.assign(a.ints().begin(), a.ints().end()); break;
    case T::kStrings: out->strings.assign(a.strings().begin(), a.strings().end()); break;
    case T::kTensors:
      for (auto& t : *a.mutable_tensors()) {
        OSPREY_ASSIGN_OR_RETURN(Tensor x, take_tensor_from_proto(&t, dir, max_elements));
        out->tensors.push_back(std::move(x));
      }
      break;
    case T::kGraphs:
      for (auto& g : *a.mutable_graphs()) {
        auto sub = std::make_shared<ir::Graph>();
        OSPREY_RETURN_IF_ERROR(import_graph(g, sub.get(), true));
        out->graphs.push_back(std::move(sub));
      }
      break;
    case T::kUndefined:
      if (a.type() == onnx::AttributeProto::SPARSE_TENSOR || a.type() == onnx::AttributeProto::SPARSE_TENSORS)
        return unimplemented("attribute '", a.name(), "': sparse tensors are not supported");
      // TYPE_PROTO attributes (e.g. Optional's `type`) carry no value a kernel needs.
      break;
  }
  return Status::Ok();
}

Status Importer::import_graph(onnx::GraphProto& g, ir::Graph* out, bool is_subgraph) {
  out->name = g.name();
  for (int i = 0; i < g.initializer_size(); ++i) {
    onnx::TensorProto& init = *g.mutable_initializer(i);
    if (init.name().empty()) return invalid_argument("an initializer has no name");
    const int id = out->add_value(init.name());
    if (out->initializers.count(id)) return invalid_argument("initializer '", init.name(), "' is defined twice");
    const RawDataInFile* raw = nullptr;
    if (!is_subgraph && raw_in_file && static_cast<size_t>(i) < raw_in_file->size() &&
        (*raw_in_file)[static_cast<size_t>(i)])
      raw = &*(*raw_in_file)[static_cast<size_t>(i)];
    Result<Tensor> converted = raw ? tensor_from_proto(init, dir, max_elements, raw)
                                   : take_tensor_from_proto(&init, dir, max_elements);
    OSPREY_ASSIGN_OR_RETURN(Tensor t, std::move(converted));
    out->values[static_cast<size_t>(id)].type = {ir::ValueType::Kind::kTensor, t.dtype(), {}, true};
    for (int64_t d : t.shape()) out->values[static_cast<size_t>(id)].type.shape.push_back({d, ""});
    out->initializers[id] = std::move(t);
  }
  if (g.sparse_initializer_size()) return unimplemented("sparse initializers are not supported");
  std::set<std::string> seen_inputs;
  for (const auto& in : g.input()) {
    if (in.name().empty()) return invalid_argument("a graph input has no name");
    if (!seen_inputs.insert(in.name()).second) return invalid_argument("graph input '", in.name(), "' is declared twice");
    const ir::ValueType vt = value_type_from_proto(in.type());
    const int id = out->find_value(in.name());
    if (id >= 0 && out->initializers.count(id)) {
      const Tensor& init = out->initializers[id];
      if (vt.kind == ir::ValueType::Kind::kTensor && vt.dtype != DType::kUndefined && vt.dtype != init.dtype())
        return invalid_argument("input '", in.name(), "' is declared ", dtype_name(vt.dtype),
                                " but its initializer is ", dtype_name(init.dtype()));
    }
    const int vid = out->add_value(in.name(), vt);
    out->inputs.push_back(vid);
  }
  for (const auto& vi : g.value_info())
    if (!vi.name().empty()) out->add_value(vi.name(), value_type_from_proto(vi.type()));

  for (auto& np : *g.mutable_node()) {
    ir::Node n;
    n.name = np.name();
    n.op_type = np.op_type();
    n.domain = canonical_domain(np.domain());
    auto it = opsets.find(n.domain);
    if (it == opsets.end()) {
      return invalid_argument("node ", n.display_name(), " uses domain '", n.domain,
                              "' which the model does not import");
    }
    n.opset = it->second;
    for (auto& a : *np.mutable_attribute()) {
      ir::Attribute attr;
      OSPREY_RETURN_IF_ERROR(import_attribute(a, &attr).with_context(n.display_name() + " attribute '" + a.name() + "'"));
      n.attributes[a.name()] = std::move(attr);
    }
    for (const auto& i : np.input()) n.inputs.push_back(i.empty() ? ir::kNoValue : out->add_value(i));
    for (const auto& o : np.output()) n.outputs.push_back(o.empty() ? ir::kNoValue : out->add_value(o));
    out->nodes.push_back(std::move(n));
  }
  for (const auto& o : g.output()) {
    if (o.name().empty()) return invalid_argument("a graph output has no name");
    out->outputs.push_back(out->add_value(o.name(), value_type_from_proto(o.type())));
  }
  return Status::Ok();
}

void collect_stats(const onnx::ModelProto& m, const ir::Graph& g, ModelStats* s) {
  s->ir_version = m.ir_version();
  s->producer = m.producer_name() + (m.producer_version().empty() ? "" : " " + m.producer_version());
  for (const auto& o : m.opset_import()) s->opsets.emplace_back(o.domain().empty() ? "ai.onnx" : o.domain(), o.version());
  std::map<std::string, int> hist;
  for (const auto& n : g.nodes) ++hist[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  s->op_histogram.assign(hist.begin(), hist.end());
  s->node_count = static_cast<int64_t>(g.nodes.size());
  auto count = [s](const Tensor& t) {
    s->parameter_count += t.numel();
    s->parameter_bytes += static_cast<int64_t>(t.nbytes());
  };
  for (const auto& [id, t] : g.initializers) count(t);
  // Exporters such as paddle2onnx store weights in Constant nodes instead of initializers.
  for (const auto& n : g.nodes)
    if (n.op_type == "Constant" && n.domain.empty())
      if (const auto* a = n.find_attribute("value"); a && a->t.defined()) count(a->t);
}

}  // namespace

ir::ValueType value_type_from_proto(const onnx::TypeProto& t) {
  ir::ValueType vt;
  const onnx::TypeProto* tp = &t;
  if (tp->has_optional_type()) {
    vt.kind = ir::ValueType::Kind::kOptional;
    tp = &tp->optional_type().elem_type();
  }
  if (tp->has_sequence_type()) {
    if (vt.kind == ir::ValueType::Kind::kUnknown) vt.kind = ir::ValueType::Kind::kSequence;
    tp = &tp->sequence_type().elem_type();
  }
  if (tp->has_tensor_type()) {
    if (vt.kind == ir::ValueType::Kind::kUnknown) vt.kind = ir::ValueType::Kind::kTensor;
    vt.dtype = static_cast<DType>(tp->tensor_type().elem_type());
    if (!dtype_is_valid(vt.dtype)) vt.dtype = DType::kUndefined;
    if (tp->tensor_type().has_shape()) {
      vt.has_shape = true;
      for (const auto& d : tp->tensor_type().shape().dim()) {
        Dim dim;
        if (d.has_dim_value()) dim.value = d.dim_value();
        else if (d.has_dim_param()) dim.symbol = d.dim_param();
        vt.shape.push_back(dim);
      }
    }
  }
  return vt;
}

Result<ImportedModel> import_model_proto(
    onnx::ModelProto& m, const std::string& model_dir, const SessionOptions& options,
    const std::vector<std::optional<RawDataInFile>>* raw_in_file) {
  if (!m.has_graph()) return invalid_argument("model has no graph");
  if (m.functions_size() > 0) return unimplemented("model-local functions are not supported");
  OpsetMap opsets;
  for (const auto& o : m.opset_import()) opsets[canonical_domain(o.domain())] = static_cast<int>(o.version());
  if (m.opset_import_size() == 0) opsets[""] = 1;  // IR v1-2 models without opset_import
  auto def = opsets.find("");
  if (def != opsets.end() && (def->second < kMinDefaultOpset || def->second > kMaxDefaultOpset))
    return unimplemented("default-domain opset ", def->second, " is not supported (supported: ",
                         kMinDefaultOpset, "-", kMaxDefaultOpset, ")",
                         def->second > kMaxDefaultOpset
                             ? str_cat("; onnx.version_converter.convert_version(model, ", kMaxDefaultOpset,
                                       ") restates a model whose ops exist at that opset")
                             : std::string());

  Importer imp{opsets, model_dir, options.max_tensor_elements, raw_in_file};
  auto graph = std::make_shared<ir::Graph>();
  OSPREY_RETURN_IF_ERROR(imp.import_graph(*m.mutable_graph(), graph.get(), false));
  OSPREY_RETURN_IF_ERROR(graph->finalize({}));
  if (!graph->captures.empty())
    return invalid_argument("value '", graph->values[static_cast<size_t>(graph->captures[0])].name,
                            "' is read but never defined");
  ImportedModel out;
  out.graph = graph;
  collect_stats(m, *graph, &out.stats);
  return out;
}

Result<ImportedModel> import_model(const std::string& bytes, const std::string& model_dir,
                                   const SessionOptions& options) {
  onnx::ModelProto m;
  if (bytes.empty()) return invalid_argument("model is empty (0 bytes)");
  if (!m.ParseFromString(bytes))
    return invalid_argument("model is not a valid ONNX protobuf (truncated or corrupt?)");
  return import_model_proto(m, model_dir, options);
}

}  // namespace osprey::onnx_import
