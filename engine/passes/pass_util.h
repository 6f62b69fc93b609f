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
// Adds `t` as an initializer under a new value named `base` (or base_1...); returns its id.
int add_initializer(ir::Graph& g, const std::string& base, Tensor t);
// True if the node holds a subgraph attribute (If, Loop, Scan...).
bool has_subgraph(const ir::Node& n);

// For each value id: the index of the node that writes it, or -1.
std::vector<int> compute_producers(const ir::Graph& g);
// For each value id: the indices of the nodes reading it, once per input slot.
std::vector<std::vector<int>> compute_readers(const ir::Graph& g);
// True when `id` is read by exactly `slots` node input slots and by nothing else (no subgraph
// capture, not a graph output): a fusion may then remove it.
bool only_read_by_nodes(const ValueUses& u, int id, int slots = 1);
// The value of a one-element float32 constant.
bool scalar_constant(const ir::Graph& g, int id, double* v);
// True when `a` and `b` agree to a relative tolerance `rel`.
bool near(double a, double b, double rel = 1e-4);
// Element type of `id` when it is certain from the graph: a constant, a declared main-graph
// input or value type, a Cast's `to`, QuantizeLinear's and DequantizeLinear's (output_dtype, the
// zero point's or uint8; the scale's), com.osprey QLinearConv's and QLinearAdd's (y_zero_point's),
// or an op whose output type is its first input's.
DType known_dtype(const ir::Graph& g, int id, const std::vector<int>& producers, bool in_subgraph);
// Index of input slot `i` of node `n`, or kNoValue when absent.
inline int input_at(const ir::Node& n, size_t i) {
  return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue;
}
// The node is op `op` of the default ONNX domain.
inline bool is_op(const ir::Node& n, const char* op) {
  return n.domain.empty() && n.op_type == op;
}
// The other input of a two-input node, given one of them; kNoValue if `x` is not an input.
int other_input(const ir::Node& n, int x);

// For nodes a pass adds: the default-domain opset the model imports (13 when none is seen),
// attribute values, and the type of a float32 tensor of unknown shape.
int default_opset(const ir::Graph& g);
ir::Attribute ints_attribute(std::vector<int64_t> v);
ir::Attribute int_attribute(int64_t v);
ir::ValueType float_tensor_type();
// A tensor of element type `d`, shape unknown.
ir::ValueType tensor_type(DType d);

}  // namespace osprey::passes
