// layer_norm_fusion (level 2): layer normalization over the last axis, written out as
//   mu = ReduceMean(x, axes=[-1]); d = x - mu; v = ReduceMean(d^2, axes=[-1])   (Pow(d, 2) or d*d)
//   y = d / Sqrt(v + eps) * gamma + beta                                         (beta optional)
// becomes one com.osprey LayerNormalization(x, gamma, beta) with axis = -1 and epsilon = eps
// (ONNX-17 semantics, so opset < 17 models get it too). Requires: float32 scalar constant eps,
// constant float32 1-D gamma/beta of x's last dim (known from shape_inference.h, so the Mul and
// Add cannot broadcast x up), ReduceMean with keepdims=1 over exactly the last axis, and no
// other use of any intermediate value. Mul and Add operands may come in either order.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

class LayerNormMatcher {
 public:
  LayerNormMatcher(const ir::Graph& g, const GraphIndex& ix) : g_(g), ix_(ix) {}
  std::vector<int> nodes;
  int x = ir::kNoValue, gamma = ir::kNoValue, beta = ir::kNoValue, y = ir::kNoValue;
  float eps = 0;

  // Starting at the first ReduceMean (node index `i`).
  bool match(int i) {
    nodes = {i};
    const ir::Node& mean = g_.nodes[static_cast<size_t>(i)];
    if (!last_axis_mean(mean)) return false;
    x = mean.inputs[0];
    const int64_t dim = last_dim(x);
    if (dim <= 0) return false;
    const ir::Node* sub = reader(mean.outputs[0], "Sub", 2);
    if (!sub || sub->inputs[0] != x || sub->inputs[1] != mean.outputs[0]) return false;
    const int d = sub->outputs[0];
    // d is read by the square (once by Pow, twice by Mul) and by the Div.
    const auto& rd = ix_.readers[static_cast<size_t>(d)];
    const ir::Node* sq = nullptr;
    const ir::Node* div = nullptr;
    for (int r : rd) {
      const ir::Node& n = g_.nodes[static_cast<size_t>(r)];
      if (is_op(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d && !div)
        div = &n;
      else if ((is_op(n, "Pow") || is_op(n, "Mul")) && n.inputs.size() == 2)
        sq = &n;
    }
    if (!sq || !div) return false;
    double two;
    const bool pow = is_op(*sq, "Pow");
    if (pow ? !(sq->inputs[0] == d && scalar_constant(g_, sq->inputs[1], &two) && two == 2.0)
            : !(sq->inputs[0] == d && sq->inputs[1] == d))
      return false;
    if (!only_read_by_nodes(ix_.uses, d, pow ? 2 : 3)) return false;
    nodes.push_back(index_of(*sq));
    nodes.push_back(index_of(*div));
    const ir::Node* var = reader(sq->outputs[0], "ReduceMean", 1);
    if (!var || !last_axis_mean(*var)) return false;
    const ir::Node* add = reader(var->outputs[0], "Add", 2);
    double e;
    if (!add || other_input(*add, var->outputs[0]) == ir::kNoValue ||
        !scalar_constant(g_, other_input(*add, var->outputs[0]), &e))
      return false;
    eps = static_cast<float>(e);
    const ir::Node* sqrt = reader(add->outputs[0], "Sqrt", 1);
    if (!sqrt || sqrt->outputs.size() != 1 || sqrt->outputs[0] != div->inputs[1] ||
        !only_read_by_nodes(ix_.uses, sqrt->outputs[0], 1))
      return false;
    const ir::Node* mul = reader(div->outputs[0], "Mul", 2);
    if (!mul) return false;
    gamma = other_input(*mul, div->outputs[0]);
    if (!channel_vector(gamma, dim)) return false;
    y = mul->outputs[0];
    // An Add of a constant [dim] vector after it is the bias.
    const int r = ix_.sole_reader(y);
    if (r >= 0 && is_op(g_.nodes[static_cast<size_t>(r)], "Add")) {
      const ir::Node& b = g_.nodes[static_cast<size_t>(r)];
      const int bv = other_input(b, y);
      if (b.outputs.size() == 1 && channel_vector(bv, dim)) {
        beta = bv;
        y = b.outputs[0];
        nodes.push_back(r);
      }
    }
    return true;
  }

 private:
  int index_of(const ir::Node& n) const { return static_cast<int>(&n - g_.nodes.data()); }

  const ir::Node* reader(int v, const char* op, size_t inputs) {
    const int r = ix_.sole_reader(v);
    if (r < 0 || !is_op(g_.nodes[static_cast<size_t>(r)], op)) return nullptr;
    const ir::Node& n = g_.nodes[static_cast<size_t>(r)];
    if (n.inputs.size() != inputs || n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue)
      return nullptr;
    nodes.push_back(r);
    return &n;
  }

  int64_t last_dim(int v) const {
    if (!ix_.facts.has_shape[static_cast<size_t>(v)]) return -1;
    const SymShape& s = ix_.facts.shapes[static_cast<size_t>(v)];
    return s.empty() || !s.back().fixed() ? -1 : s.back().value;
  }

  // ReduceMean(v) over exactly the last axis with keepdims = 1.
  bool last_axis_mean(const ir::Node& n) const {
    if (!is_op(n, "ReduceMean") || n.outputs.size() != 1 || n.inputs.empty()) return false;
    const auto* kd = n.find_attribute("keepdims");
    if (kd && (kd->type != ir::Attribute::Type::kInt || kd->i != 1)) return false;
    std::vector<int64_t> axes;
    if (n.inputs.size() > 1) {
      const Tensor* t = constant_tensor(g_, n.inputs[1]);
      if (!t || t->dtype() != DType::kInt64) return false;
      axes.assign(t->data<int64_t>(), t->data<int64_t>() + t->numel());
    } else if (const auto* a = n.find_attribute("axes");
               a && a->type == ir::Attribute::Type::kInts) {
      axes = a->ints;
    }
    if (axes.size() != 1) return false;
    if (axes[0] == -1) return true;
    const int v = n.inputs[0];
    if (!ix_.facts.has_shape[static_cast<size_t>(v)]) return false;
    return axes[0] == static_cast<int64_t>(ix_.facts.shapes[static_cast<size_t>(v)].size()) - 1;
  }

  bool channel_vector(int v, int64_t dim) const {
    const Tensor* t = constant_tensor(g_, v);
    return t && t->dtype() == DType::kFloat32 && t->rank() == 1 && t->dim(0) == dim;
  }

  const ir::Graph& g_;
  const GraphIndex& ix_;
};

class LayerNormFusion final : public Pass {
 public:
  const char* name() const override { return "layer_norm_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (dead[i] || !is_op(g.nodes[i], "ReduceMean")) continue;
      LayerNormMatcher m(g, ix);
      if (!m.match(static_cast<int>(i))) continue;
      const int last = ix.producers[static_cast<size_t>(m.y)];
      if (!claim_match(m.nodes, last, &dead)) continue;
      ir::Node& ln = g.nodes[static_cast<size_t>(last)];
      ln.op_type = "LayerNormalization";
      ln.domain = kOspreyDomain;
      ln.opset = 1;
      ln.inputs = {m.x, m.gamma, m.beta};
      if (m.beta == ir::kNoValue) ln.inputs.pop_back();
      ln.attributes.clear();
      ir::Attribute axis, eps;
      axis.type = ir::Attribute::Type::kInt;
      axis.i = -1;
      eps.type = ir::Attribute::Type::kFloat;
      eps.f = m.eps;
      ln.attributes["axis"] = axis;
      ln.attributes["epsilon"] = eps;
      ln.kernel = nullptr;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_layer_norm_fusion() {
  return std::make_unique<LayerNormFusion>();
}

}  // namespace osprey::passes
