#include "passes/pass_util.h"

#include <algorithm>

namespace osprey::passes {

bool is_graph_input(const ir::Graph& g, int id) {
  return std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end();
}

bool is_graph_output(const ir::Graph& g, int id) {
  return std::find(g.outputs.begin(), g.outputs.end(), id) != g.outputs.end();
}

bool is_constant(const ir::Graph& g, int id) {
  return id != ir::kNoValue && g.initializers.count(id) && !is_graph_input(g, id);
}

const Tensor* constant_tensor(const ir::Graph& g, int id) {
  if (!is_constant(g, id)) return nullptr;
  const Tensor& t = g.initializers.at(id);
  return t.defined() ? &t : nullptr;
}

ValueUses compute_uses(const ir::Graph& g) {
  ValueUses u;
  const size_t n = g.values.size();
  u.readers.assign(n, 0);
  u.captured.assign(n, false);
  u.output.assign(n, false);
  for (const auto& node : g.nodes) {
    for (int i : node.inputs)
      if (i != ir::kNoValue) ++u.readers[static_cast<size_t>(i)];
    for (int i : node.implicit_inputs) u.captured[static_cast<size_t>(i)] = true;
  }
  for (int o : g.outputs) u.output[static_cast<size_t>(o)] = true;
  return u;
}

void replace_uses(ir::Graph& g, int from, int to) {
  for (auto& node : g.nodes)
    for (int& i : node.inputs)
      if (i == from) i = to;
}

void erase_nodes(ir::Graph& g, const std::vector<bool>& dead) {
  std::vector<ir::Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (i >= dead.size() || !dead[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

int add_unique_value(ir::Graph& g, const std::string& base, ir::ValueType type) {
  std::string name = base;
  for (int k = 1; g.find_value(name) >= 0; ++k) name = base + "_" + std::to_string(k);
  return g.add_value(name, std::move(type));
}

ir::ValueType tensor_value_type(const Tensor& t) {
  ir::ValueType vt;
  vt.kind = ir::ValueType::Kind::kTensor;
  vt.dtype = t.dtype();
  vt.has_shape = true;
  for (int64_t d : t.shape()) vt.shape.push_back(Dim{d, ""});
  return vt;
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& [k, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

}  // namespace osprey::passes
