#include "passes/pass_util.h"

#include <algorithm>
#include <cmath>
#include <set>

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

int default_opset(const ir::Graph& g) {
  for (const auto& n : g.nodes)
    if (n.domain.empty() && n.opset > 0) return n.opset;
  return 13;
}

ir::Attribute ints_attribute(std::vector<int64_t> v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInts;
  a.ints = std::move(v);
  return a;
}

ir::Attribute int_attribute(int64_t v) {
  ir::Attribute a;
  a.type = ir::Attribute::Type::kInt;
  a.i = v;
  return a;
}

int add_initializer(ir::Graph& g, const std::string& base, Tensor t) {
  const int id = add_unique_value(g, base, tensor_value_type(t));
  g.initializers[id] = std::move(t);
  return id;
}

ir::ValueType float_tensor_type() {
  return tensor_type(DType::kFloat32);
}

ir::ValueType tensor_type(DType d) {
  ir::ValueType t;
  t.kind = ir::ValueType::Kind::kTensor;
  t.dtype = d;
  return t;
}

bool has_subgraph(const ir::Node& n) {
  for (const auto& [k, a] : n.attributes)
    if (a.g || !a.graphs.empty()) return true;
  return false;
}

std::vector<int> compute_producers(const ir::Graph& g) {
  std::vector<int> p(g.values.size(), -1);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs)
      if (o != ir::kNoValue) p[static_cast<size_t>(o)] = static_cast<int>(i);
  return p;
}

std::vector<std::vector<int>> compute_readers(const ir::Graph& g) {
  std::vector<std::vector<int>> r(g.values.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int v : g.nodes[i].inputs)
      if (v != ir::kNoValue) r[static_cast<size_t>(v)].push_back(static_cast<int>(i));
  return r;
}

bool only_read_by_nodes(const ValueUses& u, int id, int slots) {
  if (id == ir::kNoValue) return false;
  const auto i = static_cast<size_t>(id);
  return u.readers[i] == slots && !u.captured[i] && !u.output[i];
}

bool scalar_constant(const ir::Graph& g, int id, double* v) {
  const Tensor* t = constant_tensor(g, id);
  if (!t || t->dtype() != DType::kFloat32 || t->numel() != 1) return false;
  *v = t->data<float>()[0];
  return true;
}

bool near(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::fabs(b);
}

int other_input(const ir::Node& n, int x) {
  if (n.inputs.size() != 2) return ir::kNoValue;
  if (n.inputs[0] == x) return n.inputs[1];
  if (n.inputs[1] == x) return n.inputs[0];
  return ir::kNoValue;
}

DType known_dtype(const ir::Graph& g, int id, const std::vector<int>& producers, bool in_subgraph) {
  // Ops whose (first) output has the element type of their first input.
  static const std::set<std::string> kSameType = {"Add",
                                                  "Sub",
                                                  "Mul",
                                                  "Div",
                                                  "Pow",
                                                  "Relu",
                                                  "Sigmoid",
                                                  "Tanh",
                                                  "Erf",
                                                  "Sqrt",
                                                  "Exp",
                                                  "Neg",
                                                  "Abs",
                                                  "Clip",
                                                  "LeakyRelu",
                                                  "HardSigmoid",
                                                  "HardSwish",
                                                  "Softmax",
                                                  "Conv",
                                                  "MatMul",
                                                  "Gemm",
                                                  "Transpose",
                                                  "Reshape",
                                                  "Flatten",
                                                  "Squeeze",
                                                  "Unsqueeze",
                                                  "Identity",
                                                  "ReduceMean",
                                                  "ReduceSum",
                                                  "Concat",
                                                  "Gather",
                                                  "Slice",
                                                  "MaxPool",
                                                  "AveragePool",
                                                  "GlobalAveragePool",
                                                  "BatchNormalization",
                                                  "LayerNormalization",
                                                  "Dropout",
                                                  "Pad",
                                                  "Resize",
                                                  "Split",
                                                  "Expand",
                                                  "Tile",
                                                  "Reciprocal",
                                                  "Max",
                                                  "Min",
                                                  "Sum"};
  for (int depth = 0; depth < 256 && id != ir::kNoValue; ++depth) {
    if (const Tensor* t = constant_tensor(g, id)) return t->dtype();
    const ir::ValueType& vt = g.values[static_cast<size_t>(id)].type;
    const bool declared = vt.kind == ir::ValueType::Kind::kTensor && vt.dtype != DType::kUndefined;
    if (is_graph_input(g, id)) return !in_subgraph && declared ? vt.dtype : DType::kUndefined;
    if (declared && !in_subgraph) return vt.dtype;
    const int p = producers[static_cast<size_t>(id)];
    if (p < 0) return DType::kUndefined;
    const ir::Node& n = g.nodes[static_cast<size_t>(p)];
    if (is_op(n, "Cast")) {
      const auto* to = n.find_attribute("to");
      return to && to->type == ir::Attribute::Type::kInt ? static_cast<DType>(to->i)
                                                         : DType::kUndefined;
    }
    if (n.op_type == "Shape" && n.domain.empty()) return DType::kInt64;
    if (is_op(n, "MatMulInteger")) return DType::kInt32;
    if (is_op(n, "DynamicQuantizeLinear"))  // y uint8, y_scale float32, y_zero_point uint8
      return n.outputs.size() > 1 && id == n.outputs[1] ? DType::kFloat32 : DType::kUInt8;
    if (n.domain == "com.osprey" && n.op_type == "MatMulIntegerToFloat" && input_at(n, 7) != ir::kNoValue) {
      id = input_at(n, 7);  // quantized: y_zero_point's type
      continue;
    }
    if (n.domain == "com.osprey" && (n.op_type == "MatMulIntegerToFloat" || n.op_type == "ConvIntegerToFloat"))
      return DType::kFloat32;
    if (is_op(n, "ConvInteger")) return DType::kInt32;
    if (n.domain == "com.microsoft") {  // the QOperator format's quantized ops
      const std::string& op = n.op_type;
      // The output's zero point decides; absent, the first quantized input's type.
      const int out_zp = op == "QLinearAdd" || op == "QLinearMul" ? 7 : op == "QLinearWhere" ? 8
                         : op == "QLinearConcat" ? 1 : -1;
      if (out_zp >= 0) {
        const int z = input_at(n, static_cast<size_t>(out_zp));
        id = z != ir::kNoValue ? z : input_at(n, op == "QLinearWhere" ? 1 : 0);
        continue;
      }
      if (n.op_type == "QGemm") {  // float32 without y_scale, else y_zero_point's type (uint8 without)
        if (input_at(n, 7) == ir::kNoValue) return DType::kFloat32;
        if (input_at(n, 8) == ir::kNoValue) return DType::kUInt8;
        id = input_at(n, 8);
        continue;
      }
      // X's type: the pools; the table-driven activations and QLinearSoftmax when their y has
      // no zero point (with one, its type).
      if (op == "QLinearLeakyRelu" || op == "QLinearSigmoid" || op == "QLinearSoftmax") {
        id = input_at(n, 4) != ir::kNoValue ? input_at(n, 4) : input_at(n, 0);
        continue;
      }
      if ((op != "QLinearGlobalAveragePool" && op != "QLinearAveragePool") || n.inputs.empty())
        return DType::kUndefined;
      id = n.inputs[0];
      continue;
    }
    if (is_op(n, "DequantizeLinear")) {  // the scale's type
      id = input_at(n, 1);
      continue;
    }
    if (n.domain == "com.osprey" && (n.op_type == "QLinearConv" || n.op_type == "QLinearAdd")) {
      id = input_at(n, 7);  // y_zero_point's type
      continue;
    }
    if (is_op(n, "QuantizeLinear")) {  // output_dtype, else the zero point's type, else uint8
      const auto* to = n.find_attribute("output_dtype");
      if (to && (to->type != ir::Attribute::Type::kInt || to->i != 0))
        return to->type == ir::Attribute::Type::kInt ? static_cast<DType>(to->i) : DType::kUndefined;
      if (input_at(n, 2) == ir::kNoValue) return DType::kUInt8;
      id = n.inputs[2];
      continue;
    }
    const bool same =
        (n.domain.empty() && kSameType.count(n.op_type)) || (n.domain == "com.osprey");
    if (!same || n.inputs.empty()) return DType::kUndefined;
    id = n.inputs[0];
  }
  return DType::kUndefined;
}

}  // namespace osprey::passes
