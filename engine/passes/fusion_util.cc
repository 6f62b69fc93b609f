#include "passes/fusion_util.h"

#include <cmath>
#include <limits>

namespace osprey::passes {

void GraphIndex::refresh() {
  uses = compute_uses(g_);
  producers = compute_producers(g_);
  readers = compute_readers(g_);
  facts = infer_shapes(g_, in_subgraph_);
}

int GraphIndex::sole_reader(int id) const {
  if (!only_read_by_nodes(uses, id, 1)) return -1;
  return readers[static_cast<size_t>(id)][0];
}

DType GraphIndex::dtype(int id) const {
  return known_dtype(g_, id, producers, in_subgraph_);
}

namespace {

float float_attr(const ir::Node& n, const char* name, float def, bool* ok) {
  const auto* a = n.find_attribute(name);
  if (!a) return def;
  if (a->type != ir::Attribute::Type::kFloat) *ok = false;
  return a->f;
}

}  // namespace

bool clip_bounds(const ir::Graph& g, const ir::Node& n, std::vector<float>* params) {
  const float inf = std::numeric_limits<float>::infinity();
  float lo = -inf, hi = inf;
  if (n.opset < 11) {
    if (n.opset >= 6) {
      lo = std::numeric_limits<float>::lowest();
      hi = std::numeric_limits<float>::max();
    }
    bool ok = true;
    lo = float_attr(n, "min", lo, &ok);
    hi = float_attr(n, "max", hi, &ok);
    if (!ok) return false;
  } else {
    for (size_t i = 1; i <= 2; ++i) {
      const int id = input_at(n, i);
      if (id == ir::kNoValue) continue;
      double v;
      if (!scalar_constant(g, id, &v)) return false;
      (i == 1 ? lo : hi) = static_cast<float>(v);
    }
  }
  *params = {lo, hi};
  return true;
}

namespace {

const Tensor* channel_vector(const ir::Graph& g, const ir::Node& bn, size_t slot,
                             int64_t channels) {
  if (bn.inputs.size() <= slot) return nullptr;
  const Tensor* t = constant_tensor(g, bn.inputs[slot]);
  if (!t || t->dtype() != DType::kFloat32 || t->rank() != 1 || t->dim(0) != channels)
    return nullptr;
  return t;
}

}  // namespace

int operand_besides(const ir::Graph& g, const ir::Node& n, double want) {
  if (n.inputs.size() != 2) return ir::kNoValue;
  double c;
  for (size_t k = 0; k < 2; ++k)
    if (scalar_constant(g, n.inputs[k], &c) && near(c, want)) return n.inputs[1 - k];
  return ir::kNoValue;
}

int sole_binary_reader(const ir::Graph& g, const GraphIndex& ix, int v, const char* op) {
  const int r = ix.sole_reader(v);
  if (r < 0) return -1;
  const ir::Node& n = g.nodes[static_cast<size_t>(r)];
  if (!is_op(n, op) || n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue)
    return -1;
  return r;
}

bool batch_norm_inference(const ir::Node& bn) {
  if (!bn.domain.empty() || bn.op_type != "BatchNormalization" || bn.inputs.size() != 5 ||
      bn.outputs.empty() || bn.outputs[0] == ir::kNoValue)
    return false;
  for (size_t i = 1; i < bn.outputs.size(); ++i)
    if (bn.outputs[i] != ir::kNoValue) return false;  // running stats requested: training mode
  if (const auto* a = bn.find_attribute("training_mode");
      a && (a->type != ir::Attribute::Type::kInt || a->i != 0))
    return false;
  if (const auto* a = bn.find_attribute("spatial");
      a && (a->type != ir::Attribute::Type::kInt || a->i != 1))
    return false;
  return true;
}

bool batch_norm_params(const ir::Graph& g, const ir::Node& bn, int64_t m, BatchNormParams* p) {
  if (!batch_norm_inference(bn)) return false;
  const Tensor* scale = channel_vector(g, bn, 1, m);
  p->bias = channel_vector(g, bn, 2, m);
  p->mean = channel_vector(g, bn, 3, m);
  const Tensor* var = channel_vector(g, bn, 4, m);
  if (!scale || !p->bias || !p->mean || !var) return false;
  double eps = 1e-5;
  if (const auto* a = bn.find_attribute("epsilon")) {
    if (a->type != ir::Attribute::Type::kFloat) return false;
    eps = a->f;
  }
  // In double, as the reference kernel computes its per-channel factors.
  p->scale.resize(static_cast<size_t>(m));
  for (int64_t c = 0; c < m; ++c) {
    const double s = scale->data<float>()[c] / std::sqrt(static_cast<double>(var->data<float>()[c]) + eps);
    if (!std::isfinite(s)) return false;
    p->scale[static_cast<size_t>(c)] = s;
  }
  return true;
}

bool match_activation(const ir::Graph& g, const GraphIndex& ix, int y, ActivationMatch* m) {
  const auto& rd = ix.readers[static_cast<size_t>(y)];
  // Silu: y read by Sigmoid(y) and Mul(y, sigmoid) exactly.
  if (only_read_by_nodes(ix.uses, y, 2) && rd[0] != rd[1]) {
    for (int k = 0; k < 2; ++k) {
      const ir::Node& s = g.nodes[static_cast<size_t>(rd[k])];
      const ir::Node& mul = g.nodes[static_cast<size_t>(rd[1 - k])];
      if (!is_op(s, "Sigmoid") || !is_op(mul, "Mul") || s.outputs.size() != 1) continue;
      const int sv = s.outputs[0];
      if (ix.sole_reader(sv) != rd[1 - k] || other_input(mul, y) != sv) continue;
      *m = {"Silu", {}, {rd[k], rd[1 - k]}, mul.outputs[0]};
      return true;
    }
    return false;
  }
  const int r = ix.sole_reader(y);
  if (r < 0) return false;
  const ir::Node& a = g.nodes[static_cast<size_t>(r)];
  if (a.outputs.size() != 1 || a.outputs[0] == ir::kNoValue || a.inputs.empty() || a.inputs[0] != y)
    return false;
  *m = {"", {}, {r}, a.outputs[0]};
  bool ok = true;
  // Ours, or ONNX's own from opset 20 (the same op: approximate "none" or "tanh").
  if ((a.domain == kOspreyDomain || (a.domain.empty() && a.opset >= 20)) && a.op_type == "Gelu") {
    const auto* ap = a.find_attribute("approximate");
    const std::string approx = ap && ap->type == ir::Attribute::Type::kString ? ap->s : "none";
    if (approx != "none" && approx != "tanh") return false;
    m->name = approx == "tanh" ? "GeluTanh" : "Gelu";
    return a.inputs.size() == 1;
  }
  if (!a.domain.empty()) return false;
  const std::string& op = a.op_type;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || (op == "HardSwish") || (op == "Mish" && a.opset >= 18)) {
    m->name = op;
    return a.inputs.size() == 1;
  }
  if (op == "LeakyRelu") {
    m->name = op;
    m->params = {float_attr(a, "alpha", 0.01f, &ok)};
    return ok && a.inputs.size() == 1;
  }
  if (op == "HardSigmoid") {
    m->name = op;
    m->params = {float_attr(a, "alpha", 0.2f, &ok), float_attr(a, "beta", 0.5f, &ok)};
    return ok && a.inputs.size() == 1;
  }
  if (op == "Clip") {
    m->name = op;
    return clip_bounds(g, a, &m->params);
  }
  return false;
}

bool depends_on(const ir::Graph& g, const std::vector<int>& producers, int v, int node) {
  std::vector<bool> seen(g.nodes.size(), false);
  std::vector<int> stack;
  if (v != ir::kNoValue && producers[static_cast<size_t>(v)] >= 0)
    stack.push_back(producers[static_cast<size_t>(v)]);
  while (!stack.empty()) {
    const int p = stack.back();
    stack.pop_back();
    if (p == node) return true;
    if (seen[static_cast<size_t>(p)]) continue;
    seen[static_cast<size_t>(p)] = true;
    const ir::Node& n = g.nodes[static_cast<size_t>(p)];
    for (const auto* list : {&n.inputs, &n.implicit_inputs})
      for (int i : *list)
        if (i != ir::kNoValue && producers[static_cast<size_t>(i)] >= 0)
          stack.push_back(producers[static_cast<size_t>(i)]);
  }
  return false;
}

bool match_residual_add(const ir::Graph& g, const GraphIndex& ix, int y, int fused, int* add,
                        int* z) {
  const int r = ix.sole_reader(y);
  if (r < 0) return false;
  const ir::Node& a = g.nodes[static_cast<size_t>(r)];
  if (!is_op(a, "Add") || a.outputs.size() != 1 || a.outputs[0] == ir::kNoValue) return false;
  const int other = other_input(a, y);
  if (other == ir::kNoValue || other == y) return false;
  if (!ix.facts.same_shape(other, y)) return false;
  if (depends_on(g, ix.producers, other, fused)) return false;
  *add = r;
  *z = other;
  return true;
}

std::string activation_of(const ir::Node& n) {
  const auto* a = n.find_attribute("activation");
  return a && a->type == ir::Attribute::Type::kString ? a->s : "";
}

void set_activation(ir::Node& n, const ActivationMatch& m) {
  ir::Attribute act;
  act.type = ir::Attribute::Type::kString;
  act.s = m.name;
  n.attributes["activation"] = act;
  ir::Attribute params;
  params.type = ir::Attribute::Type::kFloats;
  params.floats = m.params;
  n.attributes["activation_params"] = params;
}

bool claim_match(const std::vector<int>& nodes, int keep, std::vector<bool>* dead) {
  for (int n : nodes)
    if ((*dead)[static_cast<size_t>(n)]) return false;
  for (int n : nodes) (*dead)[static_cast<size_t>(n)] = true;
  (*dead)[static_cast<size_t>(keep)] = false;
  return true;
}

void make_fused(ir::Node& n, const char* op, size_t inputs) {
  n.op_type = op;
  n.domain = kOspreyDomain;
  n.opset = 1;
  n.inputs.resize(inputs, ir::kNoValue);
  n.kernel = nullptr;
}

bool constant_padding(const ir::Graph& g, const ir::Node& pad, std::vector<int64_t>* pads, double* value) {
  if (!is_op(pad, "Pad") || pad.inputs.empty() || pad.outputs.size() != 1) return false;
  if (const auto* mode = pad.find_attribute("mode"); mode && mode->s != "constant") return false;
  *value = 0;
  if (pad.opset < 11) {  // pads and value are attributes
    const auto* p = pad.find_attribute("pads");
    if (!p || p->type != ir::Attribute::Type::kInts) return false;
    *pads = p->ints;
    if (const auto* v = pad.find_attribute("value")) *value = v->f;
  } else {
    if (input_at(pad, 3) != ir::kNoValue) return false;  // axes
    const Tensor* p = constant_tensor(g, input_at(pad, 1));
    if (!p || p->dtype() != DType::kInt64 || p->rank() != 1) return false;
    pads->assign(p->data<int64_t>(), p->data<int64_t>() + p->numel());
    const int cv = input_at(pad, 2);
    if (cv != ir::kNoValue) {
      const Tensor* t = constant_tensor(g, cv);
      if (!t || t->numel() != 1) return false;
      *value = t->get_as_double(0);
    }
  }
  const size_t r = pads->size() / 2;
  if (pads->size() % 2 != 0 || r < 3) return false;
  for (int64_t v : *pads)
    if (v < 0) return false;
  return (*pads)[0] == 0 && (*pads)[1] == 0 && (*pads)[r] == 0 && (*pads)[r + 1] == 0;
}

bool zero_padding(const ir::Graph& g, const ir::Node& pad, std::vector<int64_t>* pads) {
  double value = 1;
  return constant_padding(g, pad, pads, &value) && value == 0.0;
}

const ir::Node* producer_op(const ir::Graph& g, const GraphIndex& ix, int v, const char* op) {
  if (v < 0) return nullptr;
  const int p = ix.producers[static_cast<size_t>(v)];
  if (p < 0) return nullptr;
  const ir::Node& n = g.nodes[static_cast<size_t>(p)];
  return is_op(n, op) ? &n : nullptr;
}

bool per_tensor_quantization(const ir::Graph& g, const ir::Node& n) {
  if (!is_op(n, "QuantizeLinear") && !is_op(n, "DequantizeLinear")) return false;
  if (n.inputs.size() < 2 || n.inputs.size() > 3 || n.inputs[0] < 0 || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || n.find_attribute("block_size") || n.find_attribute("output_dtype") ||
      n.find_attribute("saturate"))
    return false;
  const Tensor* s = constant_tensor(g, n.inputs[1]);
  if (!s || s->dtype() != DType::kFloat32 || s->numel() != 1 || s->rank() > 1) return false;
  const int z = input_at(n, 2);
  if (z == ir::kNoValue) return true;
  const Tensor* zt = constant_tensor(g, z);
  return zt && (zt->dtype() == DType::kUInt8 || zt->dtype() == DType::kInt8) && zt->numel() == 1 &&
         zt->rank() <= 1;
}

}  // namespace osprey::passes
