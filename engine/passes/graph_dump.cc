#include "passes/graph_dump.h"

#include <cstdio>
#include <sstream>

namespace osprey::passes {
namespace {

constexpr size_t kMaxListItems = 8;

std::string value_name(const ir::Graph& g, int id) {
  if (id == ir::kNoValue) return "\"\"";
  return g.values[static_cast<size_t>(id)].name;
}

std::string type_string(const ir::ValueType& t) {
  std::string s;
  switch (t.kind) {
    case ir::ValueType::Kind::kUnknown: return "?";
    case ir::ValueType::Kind::kTensor: break;
    case ir::ValueType::Kind::kSequence: s = "seq "; break;
    case ir::ValueType::Kind::kOptional: s = "optional "; break;
  }
  s += t.dtype == DType::kUndefined ? "?" : dtype_name(t.dtype);
  if (t.has_shape) {
    s += "[";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) s += ",";
      const Dim& d = t.shape[i];  // as Dim::to_string, which lives in the runtime
      s += d.is_fixed() ? std::to_string(d.value) : d.symbol.empty() ? "?" : d.symbol;
    }
    s += "]";
  }
  return s;
}

std::string float_string(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

template <class T, class F>
std::string list_string(const std::vector<T>& v, F&& fmt) {
  std::string s = "[";
  for (size_t i = 0; i < v.size() && i < kMaxListItems; ++i) {
    if (i) s += ",";
    s += fmt(v[i]);
  }
  if (v.size() > kMaxListItems) s += ",... (" + std::to_string(v.size()) + ")";
  return s + "]";
}

std::string tensor_string(const Tensor& t) {
  if (!t.defined()) return "<undefined>";
  std::string s = t.debug_string();
  if (t.numel() > 0 && t.raw_data() == nullptr) return s + " (held packed by its readers)";
  if (t.numel() > 0 && t.numel() <= static_cast<int64_t>(kMaxListItems) &&
      t.dtype() != DType::kString) {
    s += "{";
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (i) s += ",";
      s += dtype_is_float(t.dtype()) ? float_string(t.get_as_double(i))
                                     : std::to_string(t.get_as_int64(i));
    }
    s += "}";
  }
  return s;
}

std::string attribute_string(const ir::Attribute& a) {
  using T = ir::Attribute::Type;
  switch (a.type) {
    case T::kUndefined: return "?";
    case T::kFloat: return float_string(a.f);
    case T::kInt: return std::to_string(a.i);
    case T::kString: return "\"" + a.s + "\"";
    case T::kTensor: return tensor_string(a.t);
    case T::kGraph: return "<graph>";
    case T::kFloats: return list_string(a.floats, [](float f) { return float_string(f); });
    case T::kInts: return list_string(a.ints, [](int64_t i) { return std::to_string(i); });
    case T::kStrings:
      return list_string(a.strings, [](const std::string& s) { return "\"" + s + "\""; });
    case T::kTensors: return list_string(a.tensors, tensor_string);
    case T::kGraphs: return "<" + std::to_string(a.graphs.size()) + " graphs>";
  }
  return "?";
}

void dump(const ir::Graph& g, const std::string& indent, std::ostringstream& os) {
  int64_t init_elems = 0;
  for (const auto& [id, t] : g.initializers) init_elems += t.numel();
  os << indent << "graph '" << g.name << "': " << g.nodes.size() << " nodes, "
     << g.initializers.size() << " initializers (" << init_elems << " elements)\n";
  const std::string in = indent + "  ";
  for (int id : g.inputs)
    os << in << "input " << value_name(g, id) << ": "
       << type_string(g.values[static_cast<size_t>(id)].type) << "\n";
  for (const auto& [id, t] : g.initializers)
    os << in << "initializer " << value_name(g, id) << ": " << tensor_string(t) << "\n";
  for (const auto& n : g.nodes) {
    os << in << (n.domain.empty() ? "" : n.domain + ".") << n.op_type << " '" << n.name << "': ";
    for (size_t i = 0; i < n.inputs.size(); ++i)
      os << (i ? ", " : "") << value_name(g, n.inputs[i]);
    os << " -> ";
    for (size_t i = 0; i < n.outputs.size(); ++i)
      os << (i ? ", " : "") << value_name(g, n.outputs[i]);
    for (const auto& [k, a] : n.attributes) os << "  " << k << "=" << attribute_string(a);
    os << "\n";
    for (const auto& [k, a] : n.attributes) {
      if (a.g) dump(*a.g, in + "  ", os);
      for (const auto& sub : a.graphs) dump(*sub, in + "  ", os);
    }
  }
  for (int id : g.outputs)
    os << in << "output " << value_name(g, id) << ": "
       << type_string(g.values[static_cast<size_t>(id)].type) << "\n";
}

}  // namespace

std::string dump_graph(const ir::Graph& g) {
  std::ostringstream os;
  dump(g, "", os);
  return os.str();
}

std::map<std::string, int> op_counts(const ir::Graph& g) {
  std::map<std::string, int> counts;
  for (const auto& n : g.nodes) ++counts[n.domain.empty() ? n.op_type : n.domain + "." + n.op_type];
  return counts;
}

}  // namespace osprey::passes
