// The graph IR: values, nodes with attributes, graphs (with nested subgraphs).
// Passes rewrite it; the executor runs it. It knows nothing about ONNX protobuf.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "osprey/session.h"
#include "osprey/tensor.h"

namespace osprey {
struct KernelDef;  // resolved by the session (engine/kernels/registry.h)
}

namespace osprey::ir {

class Graph;

struct Attribute {
  enum class Type { kUndefined, kFloat, kInt, kString, kTensor, kGraph, kFloats, kInts, kStrings, kTensors, kGraphs };
  Type type = Type::kUndefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

const char* attribute_type_name(Attribute::Type t);

// Type of a value as declared by the model (may be partial or absent).
struct ValueType {
  enum class Kind { kUnknown, kTensor, kSequence, kOptional };
  Kind kind = Kind::kUnknown;
  DType dtype = DType::kUndefined;  // element type (of the tensor, or of the sequence's tensors)
  std::vector<Dim> shape;
  bool has_shape = false;
};

struct Value {
  std::string name;
  ValueType type;
};


constexpr int kNoValue = -1;  // an omitted optional input or output

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain
  int opset = 0;       // opset version of `domain` imported by the model
  std::vector<int> inputs;   // value ids; kNoValue for omitted optionals
  std::vector<int> outputs;  // value ids; kNoValue for omitted optionals
  std::map<std::string, Attribute> attributes;
  // Values of this graph that the node's subgraphs read (set by Graph::finalize);
  // they order the node like inputs do and keep the values alive until it runs.
  std::vector<int> implicit_inputs;
  const osprey::KernelDef* kernel = nullptr;

  const Attribute* find_attribute(const std::string& name) const {
    auto it = attributes.find(name);
    return it == attributes.end() ? nullptr : &it->second;
  }
  std::string display_name() const;  // "Conv 'conv1'"
};

class Graph {
 public:
  std::string name;
  std::vector<Value> values;  // indexed by value id
  std::vector<int> inputs;    // graph inputs in declared order (may include initializer-backed ones)
  std::vector<int> outputs;
  std::map<int, Tensor> initializers;  // value id -> constant
  std::vector<Node> nodes;             // topologically sorted after finalize()
  // Values this graph reads from its enclosing graph (subgraphs only): local value ids,
  // and the ids of the same values in the enclosing graph (set by its finalize()).
  std::vector<int> captures;
  std::vector<int> capture_sources;
  // After finalize(): for each node, the value ids whose last reader it is.
  std::vector<std::vector<int>> release_after;
  // After finalize(): for each value id, the index in `nodes` of the node that outputs it; -1
  // for graph inputs, initializers and captures.
  std::vector<int> produced_by;

  int find_value(const std::string& name) const;  // -1 if absent
  int add_value(const std::string& name, ValueType type = {});
  // Sorts nodes topologically, checks every read value is defined exactly once,
  // computes release_after. Fails with a clear message on cycles or undefined values.
  // `outer_names` lists names visible from enclosing graphs (for subgraphs).
  // Subgraphs are finalized first; their captures become implicit inputs of their node.
  Status finalize(const std::vector<std::string>& outer_names = {});
  // True if `name` is defined here (input, initializer or node output) after finalize().
  bool defines(int id) const { return id >= 0 && static_cast<size_t>(id) < defined_.size() && defined_[id]; }

  // Visits this graph and every nested subgraph (depth first).
  template <class F>
  void for_each_graph(F&& f) {
    f(*this);
    for (auto& n : nodes)
      for (auto& [k, a] : n.attributes) {
        if (a.g) a.g->for_each_graph(f);
        for (auto& g : a.graphs) g->for_each_graph(f);
      }
  }

 private:
  std::unordered_map<std::string, int> by_name_;
  std::vector<bool> defined_;
};

}  // namespace osprey::ir
