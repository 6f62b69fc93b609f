// Whether a graph is separable along axis 0: see batch_split.h.
#include "runtime/batch_split.h"

#include <algorithm>
#include <set>

#include "osprey/status.h"
#include "passes/shape_inference.h"

namespace osprey {
namespace {

// What a value is to the split. kConst: the same in every item's run (initializers and what is
// computed from them alone, or from an item's shape without its first dim). kBatched: axis 0 is
// the batch. The batch size itself flows only as: kShapeOf (Shape of a batched value: entry 0 is
// the batch size), kBatchNum (its entry 0, scalar or [1]) and kLeadShape (a shape vector whose
// first entry is the batch size and the others constants); a Reshape to kShapeOf or kLeadShape
// keeps the batch, since each item's run computes 1 there.
enum class Kind { kUnknown, kConst, kBatched, kShapeOf, kBatchNum, kLeadShape };

bool is(const ir::Node& n, const char* op, bool osprey_too = false) {
  return n.op_type == op && (n.domain.empty() || (osprey_too && n.domain == "com.osprey"));
}

int64_t int_attr(const ir::Node& n, const char* name, int64_t def) {
  const ir::Attribute* a = n.find_attribute(name);
  return a && a->type == ir::Attribute::Type::kInt ? a->i : def;
}

class Checker {
 public:
  Checker(const ir::Graph& g, const passes::ShapeFacts& facts) : g_(g), facts_(facts) {
    kind_.assign(g.values.size(), Kind::kUnknown);
    for (const auto& [id, t] : g.initializers) kind_[static_cast<size_t>(id)] = Kind::kConst;
  }

  std::string check() {
    std::string symbol;
    for (int id : g_.inputs) {
      if (g_.initializers.count(id)) continue;
      const ir::Value& v = g_.values[static_cast<size_t>(id)];
      if (v.type.kind != ir::ValueType::Kind::kTensor || !v.type.has_shape || v.type.shape.empty() ||
          v.type.shape[0].is_fixed() || v.type.shape[0].symbol.empty())
        return str_cat("input '", v.name, "' has no named symbolic first dim");
      if (!symbol.empty() && v.type.shape[0].symbol != symbol)
        return str_cat("inputs do not share one symbolic first dim ('", symbol, "', '",
                       v.type.shape[0].symbol, "')");
      symbol = v.type.shape[0].symbol;
      kind_[static_cast<size_t>(id)] = Kind::kBatched;
    }
    if (symbol.empty()) return "the graph has no inputs to split";
    for (const ir::Node& n : g_.nodes) {
      std::string why = node_obstacle(n);
      if (!why.empty()) return str_cat(n.display_name(), ": ", why);
      const bool all_const = std::all_of(n.inputs.begin(), n.inputs.end(), [&](int v) {
        return v == ir::kNoValue || kind(v) == Kind::kConst;
      });
      const Kind out = all_const ? Kind::kConst : shape_kind(n);
      for (int o : n.outputs)
        if (o != ir::kNoValue) kind_[static_cast<size_t>(o)] = out;
    }
    for (int o : g_.outputs)
      if (kind(o) != Kind::kBatched)
        return str_cat("output '", g_.values[static_cast<size_t>(o)].name, "' does not carry the batch");
    return "";
  }

  // After check() found no obstacle: value `v` carries the batch on axis 0.
  bool batched_value(int v) const { return batched(v); }

 private:
  Kind kind(int v) const { return v == ir::kNoValue ? Kind::kUnknown : kind_[static_cast<size_t>(v)]; }
  bool batched(int v) const { return kind(v) == Kind::kBatched; }
  bool absent_or_const(int v) const { return v == ir::kNoValue || kind(v) == Kind::kConst; }
  int in(const ir::Node& n, size_t i) const { return i < n.inputs.size() ? n.inputs[i] : ir::kNoValue; }
  int64_t rank(int v) const {
    const auto u = static_cast<size_t>(v);
    return facts_.has_shape[u] ? static_cast<int64_t>(facts_.shapes[u].size()) : -1;
  }
  const Tensor* constant(int v) const {
    auto it = g_.initializers.find(v);
    return it == g_.initializers.end() ? nullptr : &it->second;
  }

  // Axis `a` of a value of rank r (-1: unknown) is not axis 0.
  static bool off_batch_axis(int64_t a, int64_t r) { return a > 0 || (a < 0 && r > 0 && a + r > 0); }

  // A constant operand `c` of an element-wise op with batched operand `b` leaves axis 0 alone.
  bool broadcast_keeps_batch(int c, int b) const {
    const Tensor* t = constant(c);
    if (!t) return false;
    const int64_t rb = rank(b);
    if (t->rank() == 0 || (t->numel() == 1 && t->rank() <= 1)) return true;
    if (rb < 0) return false;
    return t->rank() < rb || (t->rank() == rb && t->dim(0) == 1);
  }

  std::string elementwise(const ir::Node& n, size_t first_const_ok) const {
    int b = ir::kNoValue;
    for (int v : n.inputs)
      if (batched(v)) b = v;
    if (b == ir::kNoValue) return "";
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const int v = n.inputs[i];
      if (v == ir::kNoValue || batched(v)) continue;
      if (i >= first_const_ok && kind(v) == Kind::kConst) continue;  // parameters (Clip's bounds)
      if (!broadcast_keeps_batch(v, b)) return "an operand broadcasts along axis 0 or is not constant";
    }
    return "";
  }

  // The kind of a node's outputs that node_obstacle accepted (not all inputs constant).
  Kind shape_kind(const ir::Node& n) const {
    if (is(n, "Shape")) return Kind::kShapeOf;
    if (is(n, "Gather") && kind(in(n, 0)) == Kind::kShapeOf)
      return gather_takes_batch(n) ? Kind::kBatchNum : Kind::kConst;
    if (is(n, "Unsqueeze") && kind(in(n, 0)) == Kind::kBatchNum) return Kind::kBatchNum;
    if (is(n, "Concat") && kind(in(n, 0)) == Kind::kBatchNum) return Kind::kLeadShape;
    return Kind::kBatched;
  }

  // Gather over a kShapeOf value with constant indices that are exactly the batch entry (true),
  // or do not include it (false: the same in every item).
  bool gather_takes_batch(const ir::Node& n) const {
    const Tensor* t = constant(in(n, 1));
    return t && t->numel() == 1 && t->get_as_int64(0) == 0;
  }

  // Nodes that read the batch size (kShapeOf, kBatchNum, kLeadShape values).
  std::string shape_obstacle(const ir::Node& n) const {
    auto only_const_after_first = [&] {
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (!absent_or_const(n.inputs[i])) return false;
      return true;
    };
    const Kind k0 = kind(in(n, 0));
    if (is(n, "Gather") && k0 == Kind::kShapeOf && int_attr(n, "axis", 0) == 0) {
      const Tensor* t = constant(in(n, 1));
      if (!t) return "gathers the batch size with computed indices";
      if (gather_takes_batch(n)) return "";
      const int64_t r = rank_of_shape(n);
      for (int64_t i = 0; i < t->numel(); ++i) {
        const int64_t v = t->get_as_int64(i);
        if (v == 0 || (v < 0 && (r < 0 || v + r == 0))) return "gathers the batch size with other entries";
      }
      return "";
    }
    if (is(n, "Unsqueeze") && k0 == Kind::kBatchNum && only_const_after_first()) return "";
    if (is(n, "Concat") && k0 == Kind::kBatchNum && int_attr(n, "axis", 0) == 0 && only_const_after_first())
      return "";
    if (is(n, "Reshape") && batched(in(n, 0)) &&
        (kind(in(n, 1)) == Kind::kLeadShape || kind(in(n, 1)) == Kind::kShapeOf) &&
        int_attr(n, "allowzero", 0) == 0)
      return "";
    return "reads the batch size";
  }

  // The length of the Shape value a Gather reads (-1 when unknown).
  int64_t rank_of_shape(const ir::Node& n) const {
    const auto u = static_cast<size_t>(in(n, 0));
    return facts_.has_shape[u] && facts_.shapes[u].size() == 1 && facts_.shapes[u][0].fixed()
               ? facts_.shapes[u][0].value
               : -1;
  }

  std::string node_obstacle(const ir::Node& n) const {
    for (int v : n.inputs)
      if (v != ir::kNoValue && (kind(v) == Kind::kShapeOf || kind(v) == Kind::kBatchNum ||
                                kind(v) == Kind::kLeadShape))
        return shape_obstacle(n);
    if (is(n, "Shape"))
      return batched(in(n, 0)) && int_attr(n, "start", 0) == 0 ? "" : "takes part of a batched shape";
    for (const auto& [name, a] : n.attributes)
      if (a.type == ir::Attribute::Type::kGraph || a.type == ir::Attribute::Type::kGraphs)
        return "has a subgraph";
    const bool any_batched = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int v) { return batched(v); });
    static const std::set<std::string> random = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                 "RandomUniformLike", "Bernoulli", "Multinomial"};
    if (random.count(n.op_type)) return "draws random numbers";
    if (!any_batched) {
      for (int v : n.inputs)
        if (v != ir::kNoValue && kind(v) != Kind::kConst) return "reads a value of unknown kind";
      return "";  // constant in, constant out
    }
    static const std::set<std::string> unary = {
        "Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu", "Selu",
        "Softplus", "Softsign", "Erf", "Exp", "Log", "Sqrt", "Abs", "Neg", "Reciprocal",
        "Floor", "Ceil", "Round", "Identity", "Cast", "Gelu", "Mish", "Sin", "Cos", "Not"};
    static const std::set<std::string> binary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
                                                 "Equal", "Less", "Greater", "And", "Or", "Where",
                                                 "PRelu", "Sum", "Mean"};
    if (n.domain.empty() && unary.count(n.op_type))
      return batched(in(n, 0)) && n.inputs.size() == 1 ? "" : "its input is not the batched one";
    if (is(n, "Gelu", true)) return elementwise(n, 1);
    if (is(n, "Clip")) return batched(in(n, 0)) ? elementwise(n, 1) : "its input is not the batched one";
    if (n.domain.empty() && binary.count(n.op_type)) return elementwise(n, n.inputs.size());
    if (is(n, "Dropout")) {
      if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return "its mask output is read";
      return n.inputs.size() == 1 && batched(in(n, 0)) ? "" : "may drop at random (ratio or training_mode given)";
    }
    if (is(n, "Conv") || is(n, "FusedConv", true)) {
      const bool z_ok = in(n, 3) == ir::kNoValue || batched(in(n, 3));
      return batched(in(n, 0)) && absent_or_const(in(n, 1)) && absent_or_const(in(n, 2)) && z_ok
                 ? ""
                 : "weights are not constant or X/Z is not batched";
    }
    if (is(n, "BatchNormalization")) {
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (!absent_or_const(n.inputs[i])) return "statistics are not constant";
      return n.outputs.size() == 1 && batched(in(n, 0)) ? "" : "training outputs";
    }
    if (is(n, "MaxPool", true)) {
      if (n.outputs.size() > 1 && n.outputs[1] != ir::kNoValue) return "its Indices count across the batch";
      return batched(in(n, 0)) ? "" : "X is not batched";
    }
    if (is(n, "AveragePool") || is(n, "GlobalAveragePool") || is(n, "GlobalMaxPool"))
      return batched(in(n, 0)) ? "" : "X is not batched";
    if (n.domain.empty() && n.op_type.rfind("Reduce", 0) == 0) return reduce(n);
    if (is(n, "Softmax") || is(n, "LogSoftmax")) {
      const int64_t axis = int_attr(n, "axis", n.opset >= 13 ? -1 : 1);
      return off_batch_axis(axis, rank(in(n, 0))) ? "" : "normalizes along axis 0";
    }
    if (is(n, "Concat")) {
      for (int v : n.inputs)
        if (!batched(v)) return "concatenates a value without the batch";
      return off_batch_axis(int_attr(n, "axis", 0), rank(in(n, 0))) ? "" : "concatenates along axis 0";
    }
    if (is(n, "Transpose")) {
      const ir::Attribute* p = n.find_attribute("perm");
      return p && !p->ints.empty() && p->ints[0] == 0 ? "" : "moves axis 0";
    }
    if (is(n, "Flatten"))
      return off_batch_axis(int_attr(n, "axis", 1), rank(in(n, 0))) ? "" : "flattens the batch away";
    if (is(n, "Reshape")) {
      const Tensor* s = constant(in(n, 1));
      if (!s || s->rank() != 1 || s->numel() < 1 || int_attr(n, "allowzero", 0) != 0)
        return "the shape is not a constant that keeps dim 0";
      return s->get_as_int64(0) == 0 ? "" : "the shape does not keep dim 0 (its first entry is not 0)";
    }
    if (is(n, "MatMul") || is(n, "FusedMatMul", true)) {
      if (int_attr(n, "transA", 0) != 0 || int_attr(n, "trans_a", 0) != 0) return "A is transposed";
      for (size_t i = 1; i < n.inputs.size(); ++i)
        if (!absent_or_const(n.inputs[i]) && !(i == 3 && batched(n.inputs[i])))
          return "B or the bias is not constant";
      const int64_t ra = rank(in(n, 0));
      if (!batched(in(n, 0)) || ra < 2) return "A is not batched rows";
      // B's leading dims broadcast against A's: they may not add axes before the batch or
      // broadcast along it.
      const Tensor* b = constant(in(n, 1));
      if (!b || b->rank() > ra || (b->rank() == ra && ra >= 3 && b->dim(0) != 1))
        return "B broadcasts along axis 0";
      return "";
    }
    if (is(n, "Gemm")) {
      if (int_attr(n, "transA", 0) != 0) return "A is transposed";
      if (!batched(in(n, 0)) || !absent_or_const(in(n, 1))) return "A is not batched or B is not constant";
      const int c = in(n, 2);
      return c == ir::kNoValue || broadcast_keeps_batch(c, in(n, 0)) ? "" : "C broadcasts along axis 0";
    }
    if (is(n, "LayerNormalization", true)) {
      if (!batched(in(n, 0)) || !absent_or_const(in(n, 1)) || !absent_or_const(in(n, 2)))
        return "X is not batched or the scale/bias is not constant";
      return off_batch_axis(int_attr(n, "axis", -1), rank(in(n, 0))) ? "" : "normalizes along axis 0";
    }
    if (is(n, "Attention", true) && n.domain == "com.osprey") {
      for (size_t i = 0; i < 3; ++i)  // K and V are absent when packed in Q
        if (!batched(in(n, i)) && (i == 0 || in(n, i) != ir::kNoValue))
          return "Q, K or V is not batched";
      const int mask = in(n, 3);
      return mask == ir::kNoValue || batched(mask) || broadcast_keeps_batch(mask, in(n, 0))
                 ? ""
                 : "the mask broadcasts along axis 0";
    }
    return "its items may mix along axis 0 (not an op the split knows)";
  }

  std::string reduce(const ir::Node& n) const {
    std::vector<int64_t> axes;
    if (const ir::Attribute* a = n.find_attribute("axes")) {
      axes = a->ints;
    } else if (in(n, 1) != ir::kNoValue) {
      const Tensor* t = constant(in(n, 1));
      if (!t) return "the axes are not constant";
      axes = t->to_int64_vector();
    }
    if (axes.empty()) return "reduces every axis";
    for (int64_t a : axes)
      if (!off_batch_axis(a, rank(in(n, 0)))) return "reduces along axis 0";
    return "";
  }

  const ir::Graph& g_;
  const passes::ShapeFacts& facts_;
  std::vector<Kind> kind_;
};

}  // namespace

std::string batch_split_obstacle(const ir::Graph& g, const passes::ShapeFacts& facts) {
  return Checker(g, facts).check();
}

namespace {
// Bytes of one item of `id` (float32; its first dim counted as 1), or -1 when not fixed.
double item_bytes(const passes::ShapeFacts& facts, int id) {
  const auto i = static_cast<size_t>(id);
  if (id < 0 || i >= facts.shapes.size() || !facts.has_shape[i] || facts.shapes[i].empty()) return -1;
  double n = 4;
  for (size_t d = 1; d < facts.shapes[i].size(); ++d) {
    if (!facts.shapes[i][d].fixed()) return -1;
    n *= static_cast<double>(facts.shapes[i][d].value);
  }
  return n;
}

bool convolution(const ir::Node& n) { return is(n, "Conv") || is(n, "FusedConv", true); }
bool product(const ir::Node& n) { return is(n, "MatMul") || is(n, "FusedMatMul", true) || is(n, "Gemm"); }
}  // namespace

bool has_convolution(const ir::Graph& g) {
  return std::any_of(g.nodes.begin(), g.nodes.end(), convolution);
}

namespace {
// The weight traffic from each node on: [k] counts nodes k..n-1, [n] none (one pass, back to
// front, so that batch_cuts weighs every boundary in linear time).
std::vector<WeightTraffic> traffic_from_each(const ir::Graph& g, const passes::ShapeFacts& facts) {
  const size_t n = g.nodes.size();
  std::vector<WeightTraffic> t(n + 1);
  std::vector<char> any(n + 1, 0), unknown(n + 1, 0);
  for (size_t k = n; k-- > 0;) {
    t[k] = t[k + 1], any[k] = any[k + 1], unknown[k] = unknown[k + 1];
    const ir::Node& nd = g.nodes[k];
    if (!(convolution(nd) || product(nd)) || nd.inputs.size() < 2 || nd.outputs.empty()) continue;
    const auto w = g.initializers.find(nd.inputs[1]);
    const double in = item_bytes(facts, nd.inputs[0]), out = item_bytes(facts, nd.outputs[0]);
    // A product of two activations, or one whose shapes are not known (a classifier after a
    // Reshape to the batch size), is left out: the weights it would share go uncounted.
    if (product(nd) && (w == g.initializers.end() || in < 0 || out < 0)) continue;
    any[k] = 1;
    if (w == g.initializers.end() || in < 0 || out < 0) {
      unknown[k] = 1;
      continue;
    }
    t[k].weight_bytes += static_cast<double>(w->second.nbytes());
    t[k].act_bytes += in + out;
    t[k].max_act_bytes = std::max(t[k].max_act_bytes, in + out);
  }
  for (size_t k = 0; k <= n; ++k) t[k].known = any[k] && !unknown[k];
  return t;
}
}  // namespace

WeightTraffic weight_traffic(const ir::Graph& g, const passes::ShapeFacts& facts, size_t first_node) {
  return traffic_from_each(g, facts)[std::min(first_node, g.nodes.size())];
}

int64_t whole_batch_limit(const WeightTraffic& t, int64_t llc_bytes) {
  if (!t.known || llc_bytes <= 0 || t.max_act_bytes <= 0 || 2 * t.weight_bytes < t.act_bytes)
    return 0;
  return static_cast<int64_t>(static_cast<double>(llc_bytes) / (4 * t.max_act_bytes));
}

std::vector<BatchCut> batch_cuts(const ir::Graph& g, const passes::ShapeFacts& facts, int64_t llc_bytes) {
  Checker checker(g, facts);
  if (!checker.check().empty()) return {};
  // Values crossing the boundary before node k (k = 1..n-1): made before it (by a node or as a
  // graph input) and read from it on, or a graph output. Counted, and their ids summed (the one
  // value where the count is 1), as +1 over the boundaries [made + 1, last read].
  const size_t n = g.nodes.size();
  constexpr int kNotMade = -2;
  std::vector<int> made(g.values.size(), kNotMade), last(g.values.size(), -1);
  for (int v : g.inputs)
    if (!g.initializers.count(v)) made[static_cast<size_t>(v)] = -1;
  for (size_t k = 0; k < n; ++k) {
    for (int v : g.nodes[k].inputs)
      if (v != ir::kNoValue) last[static_cast<size_t>(v)] = static_cast<int>(k);
    for (int v : g.nodes[k].outputs)
      if (v != ir::kNoValue) made[static_cast<size_t>(v)] = static_cast<int>(k);
  }
  for (int v : g.outputs) last[static_cast<size_t>(v)] = static_cast<int>(n);
  std::vector<int64_t> count(n + 2, 0), ids(n + 2, 0);
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (made[v] == kNotMade || last[v] <= made[v]) continue;
    count[static_cast<size_t>(made[v] + 1)] += 1, ids[static_cast<size_t>(made[v] + 1)] += static_cast<int64_t>(v);
    count[static_cast<size_t>(last[v] + 1)] -= 1, ids[static_cast<size_t>(last[v] + 1)] -= static_cast<int64_t>(v);
  }
  std::vector<BatchCut> cuts;
  const std::vector<WeightTraffic> traffic = traffic_from_each(g, facts);
  auto consider = [&](size_t node, int value) {
    const WeightTraffic& t = traffic[node];
    BatchCut c{node, value, whole_batch_limit(t, llc_bytes), 2 * t.weight_bytes - t.act_bytes};
    if (c.whole_up_to >= 2) cuts.push_back(c);
  };
  consider(0, ir::kNoValue);
  int64_t crossing = count[0], id_sum = ids[0];
  for (size_t k = 1; k < n; ++k) {
    crossing += count[k], id_sum += ids[k];
    if (crossing != 1) continue;
    const int v = static_cast<int>(id_sum);
    const auto u = static_cast<size_t>(v);
    if (made[u] >= 0 && last[u] < static_cast<int>(n) && checker.batched_value(v) && item_bytes(facts, v) > 0)
      consider(k, v);
  }
  // Equal gains (no weighted node between two cuts): the later cut, whose batch runs fewer nodes
  // whole and gathers a value no larger after pooling.
  std::sort(cuts.begin(), cuts.end(), [](const BatchCut& a, const BatchCut& b) {
    return a.gain != b.gain ? a.gain > b.gain : a.node > b.node;
  });
  return cuts;
}

}  // namespace osprey
