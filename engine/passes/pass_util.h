// Small graph-editing helpers shared by the passes (not a pass itself).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace osprey::passes {

// A value is a constant when it is an initializer that is not also a graph input
// (initializer-backed inputs are defaults the caller may override).
bool is_constant(const ir::Graph& g, int id);
const Tensor* constant_tensor(const ir::Graph& g, int id);  // nullptr unless is_constant
bool is_graph_input(const ir::Graph& g, int id);
bool is_graph_output(const ir::Graph& g, int id);

// How each value is read, indexed by value id.
struct ValueUses {
  std::vector<int> readers;    // number of (node, input slot) reads
  std::vector<bool> captured;  // read by a subgraph of some node (an implicit input)
  std::vector<bool> output;    // a graph output
  // Read at all, by a node, a subgraph or as a graph output.
  bool used(int id) const {
    const auto u = static_cast<size_t>(id);
    return readers[u] > 0 || captured[u] || output[u];
  }
};
ValueUses compute_uses(const ir::Graph& g);

// Points every node input that reads `from` at `to` (implicit inputs are not touched:
// callers must not rewrite captured values).
void replace_uses(ir::Graph& g, int from, int to);
// Removes the nodes whose flag is set (node order of the rest is kept).
void erase_nodes(ir::Graph& g, const std::vector<bool>& dead);
// Adds a value named `base`, or `base_1`, `base_2`... when the name is taken.
int add_unique_value(ir::Graph& g, const std::string& base, ir::ValueType type);
ir::ValueType tensor_value_type(const Tensor& t);
// True if the node holds a subgraph attribute (If, Loop, Scan...).
bool has_subgraph(const ir::Node& n);

}  // namespace osprey::passes
