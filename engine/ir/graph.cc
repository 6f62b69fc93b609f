#include "ir/graph.h"

#include <algorithm>
#include <queue>
#include <set>

namespace osprey::ir {

const char* attribute_type_name(Attribute::Type t) {
  switch (t) {
    case Attribute::Type::kUndefined: return "undefined";
    case Attribute::Type::kFloat: return "float";
    case Attribute::Type::kInt: return "int";
    case Attribute::Type::kString: return "string";
    case Attribute::Type::kTensor: return "tensor";
    case Attribute::Type::kGraph: return "graph";
    case Attribute::Type::kFloats: return "floats";
    case Attribute::Type::kInts: return "ints";
    case Attribute::Type::kStrings: return "strings";
    case Attribute::Type::kTensors: return "tensors";
    case Attribute::Type::kGraphs: return "graphs";
  }
  return "?";
}

std::string Node::display_name() const {
  std::string s = domain.empty() ? op_type : domain + "." + op_type;
  if (!name.empty()) s += " '" + name + "'";
  return s;
}

int Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

int Graph::add_value(const std::string& name, ValueType type) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) {
    if (type.kind != ValueType::Kind::kUnknown) values[static_cast<size_t>(it->second)].type = type;
    return it->second;
  }
  const int id = static_cast<int>(values.size());
  values.push_back({name, std::move(type)});
  by_name_[name] = id;
  return id;
}

namespace {
void collect_subgraphs(Node& n, std::vector<Graph*>* out) {
  for (auto& [k, a] : n.attributes) {
    if (a.g) out->push_back(a.g.get());
    for (auto& g : a.graphs) out->push_back(g.get());
  }
}
}  // namespace

Status Graph::finalize(const std::vector<std::string>& outer_names) {
  const size_t nv0 = values.size();
  std::vector<int> producer(nv0, -1);
  defined_.assign(nv0, false);
  for (int id : inputs) defined_[static_cast<size_t>(id)] = true;
  for (auto& [id, t] : initializers) defined_[static_cast<size_t>(id)] = true;
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    for (int o : nodes[ni].outputs) {
      if (o == kNoValue) continue;
      const size_t ou = static_cast<size_t>(o);
      if (producer[ou] >= 0 || (defined_[ou] && !initializers.count(o)))
        return invalid_argument("value '", values[ou].name, "' is produced more than once (by ",
                                nodes[ni].display_name(), ")");
      producer[ou] = static_cast<int>(ni);
      defined_[ou] = true;
    }
  }
  captures.clear();  // recomputed from what the graph reads now (passes may have rewritten it)
  const std::set<std::string> outer(outer_names.begin(), outer_names.end());
  auto resolve_read = [&](int id, const Node* reader) -> Status {
    const size_t u = static_cast<size_t>(id);
    if (u < defined_.size() && defined_[u]) return Status::Ok();
    if (std::find(captures.begin(), captures.end(), id) != captures.end()) return Status::Ok();
    if (outer.count(values[u].name)) {
      captures.push_back(id);
      return Status::Ok();
    }
    return invalid_argument(reader ? reader->display_name() + " reads" : std::string("graph output"),
                            " undefined value '", values[u].name, "'");
  };

  // Subgraphs see every name of this graph and of the graphs around it.
  std::vector<std::string> inner_names = outer_names;
  for (const auto& v : values) inner_names.push_back(v.name);
  for (auto& n : nodes) {
    std::vector<Graph*> subs;
    collect_subgraphs(n, &subs);
    n.implicit_inputs.clear();
    for (Graph* g : subs) {
      OSPREY_RETURN_IF_ERROR(g->finalize(inner_names).with_context(n.display_name() + " subgraph"));
      g->capture_sources.clear();
      for (int c : g->captures) {
        const std::string& cname = g->values[static_cast<size_t>(c)].name;
        int id = find_value(cname);
        if (id < 0) id = add_value(cname);
        if (static_cast<size_t>(id) >= defined_.size()) {
          defined_.resize(values.size(), false);
          producer.resize(values.size(), -1);
        }
        g->capture_sources.push_back(id);
        if (std::find(n.implicit_inputs.begin(), n.implicit_inputs.end(), id) == n.implicit_inputs.end())
          n.implicit_inputs.push_back(id);
      }
    }
  }
  for (auto& n : nodes) {
    for (int i : n.inputs)
      if (i != kNoValue) OSPREY_RETURN_IF_ERROR(resolve_read(i, &n));
    for (int i : n.implicit_inputs) OSPREY_RETURN_IF_ERROR(resolve_read(i, &n));
  }
  for (int o : outputs) OSPREY_RETURN_IF_ERROR(resolve_read(o, nullptr));

  // Kahn's algorithm, keeping the model's order where it is already valid.
  const size_t n_nodes = nodes.size();
  std::vector<int> indegree(n_nodes, 0);
  std::vector<std::vector<int>> consumers(n_nodes);
  for (size_t ni = 0; ni < n_nodes; ++ni) {
    std::set<int> deps;
    auto add_dep = [&](int v) {
      if (v == kNoValue || static_cast<size_t>(v) >= producer.size()) return;
      const int p = producer[static_cast<size_t>(v)];
      if (p >= 0) deps.insert(p);
    };
    for (int v : nodes[ni].inputs) add_dep(v);
    for (int v : nodes[ni].implicit_inputs) add_dep(v);
    for (int p : deps) {
      if (p == static_cast<int>(ni))
        return invalid_argument(nodes[ni].display_name(), " reads its own output (cycle)");
      consumers[static_cast<size_t>(p)].push_back(static_cast<int>(ni));
      ++indegree[ni];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (size_t ni = 0; ni < n_nodes; ++ni)
    if (indegree[ni] == 0) ready.push(static_cast<int>(ni));
  std::vector<int> order;
  while (!ready.empty()) {
    const int ni = ready.top();
    ready.pop();
    order.push_back(ni);
    for (int c : consumers[static_cast<size_t>(ni)])
      if (--indegree[static_cast<size_t>(c)] == 0) ready.push(c);
  }
  if (order.size() != n_nodes) {
    for (size_t ni = 0; ni < n_nodes; ++ni)
      if (indegree[ni] > 0)
        return invalid_argument("graph has a cycle through ", nodes[ni].display_name());
  }
  std::vector<Node> sorted;
  sorted.reserve(n_nodes);
  for (int ni : order) sorted.push_back(std::move(nodes[static_cast<size_t>(ni)]));
  nodes = std::move(sorted);

  // Lifetimes: release each value after its last reader (or right after an unread producer).
  std::vector<int> last_use(values.size(), -1);
  for (size_t ni = 0; ni < nodes.size(); ++ni) {
    for (int v : nodes[ni].inputs)
      if (v != kNoValue) last_use[static_cast<size_t>(v)] = static_cast<int>(ni);
    for (int v : nodes[ni].implicit_inputs) last_use[static_cast<size_t>(v)] = static_cast<int>(ni);
    for (int v : nodes[ni].outputs)
      if (v != kNoValue && last_use[static_cast<size_t>(v)] < static_cast<int>(ni))
        last_use[static_cast<size_t>(v)] = static_cast<int>(ni);
  }
  for (int o : outputs) last_use[static_cast<size_t>(o)] = -1;
  produced_by.assign(values.size(), -1);
  for (size_t ni = 0; ni < nodes.size(); ++ni)
    for (int v : nodes[ni].outputs)
      if (v != kNoValue) produced_by[static_cast<size_t>(v)] = static_cast<int>(ni);
  release_after.assign(nodes.size(), {});
  for (size_t v = 0; v < values.size(); ++v)
    if (last_use[v] >= 0) release_after[static_cast<size_t>(last_use[v])].push_back(static_cast<int>(v));
  defined_.resize(values.size(), false);
  return Status::Ok();
}

}  // namespace osprey::ir
