// gelu_fusion (level 2): a decomposed GELU on float32 becomes one com.osprey Gelu.
//   erf form:  x * 0.5 * (1 + Erf(x / 1.41421...))     (or Erf(x * 0.70710...))
//   tanh form: 0.5 * x * (1 + Tanh(0.79788... * (x + 0.044715 * x^3)))
//              (x^3 as Pow(x, 3) or x * x * x; approximate = "tanh")
// The final product may be ((x * p) * 0.5), ((x * 0.5) * p) or (x * (p * 0.5)), with
// p = 1 + Erf/Tanh(...), every Mul/Add in either operand order. Constants are float32
// scalars checked to a relative tolerance of 1e-4 (so x is float32: Mul/Div/Add need one
// type). Every intermediate value must have no other use; x may have others. The last Mul's
// output becomes the Gelu's output.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

class GeluMatcher {
 public:
  GeluMatcher(const ir::Graph& g, const GraphIndex& ix) : g_(g), ix_(ix) {}
  std::vector<int> nodes;  // the nodes of the match

  // Erf or Tanh node `f`: the GELU's input x and output y, or false.
  bool match(const ir::Node& f, bool tanh_form, int* x, int* y) {
    nodes.clear();
    if (f.inputs.size() != 1 || f.outputs.size() != 1) return false;
    *x = tanh_form ? tanh_argument(f.inputs[0]) : erf_argument(f.inputs[0]);
    if (*x == ir::kNoValue) return false;
    *y = tail(f.outputs[0], *x);
    return *y != ir::kNoValue;
  }

 private:
  // The node producing `v` if it is `op` and `v` is read by exactly `slots` input slots.
  const ir::Node* producer(int v, const char* op, int slots = 1) {
    if (v == ir::kNoValue || !only_read_by_nodes(ix_.uses, v, slots)) return nullptr;
    const int p = ix_.producers[static_cast<size_t>(v)];
    if (p < 0 || !is_op(g_.nodes[static_cast<size_t>(p)], op)) return nullptr;
    const ir::Node& n = g_.nodes[static_cast<size_t>(p)];
    if (n.inputs.size() != 2 || n.outputs.size() != 1) return nullptr;
    nodes.push_back(p);
    return &n;
  }
  // The single reader of `v` if it is the binary op `op`.
  const ir::Node* reader(int v, const char* op) {
    const int r = sole_binary_reader(g_, ix_, v, op);
    if (r < 0) return nullptr;
    nodes.push_back(r);
    return &g_.nodes[static_cast<size_t>(r)];
  }
  int operand_besides(const ir::Node& n, double want) { return passes::operand_besides(g_, n, want); }

  // d = x / sqrt2 or x * (1 / sqrt2): x.
  int erf_argument(int d) {
    if (const ir::Node* div = producer(d, "Div")) {
      double c;
      return scalar_constant(g_, div->inputs[1], &c) && near(c, kSqrt2) ? div->inputs[0]
                                                                        : ir::kNoValue;
    }
    if (const ir::Node* mul = producer(d, "Mul")) return operand_besides(*mul, 1.0 / kSqrt2);
    return ir::kNoValue;
  }

  // s = sqrt(2/pi) * (x + 0.044715 * x^3): x.
  int tanh_argument(int s) {
    const ir::Node* scale = producer(s, "Mul");
    if (!scale) return ir::kNoValue;
    const int u = operand_besides(*scale, kSqrt2OverPi);
    const ir::Node* sum = producer(u, "Add");
    if (!sum) return ir::kNoValue;
    for (int k = 0; k < 2; ++k) {
      const int x = sum->inputs[static_cast<size_t>(k)];
      const int v = sum->inputs[static_cast<size_t>(1 - k)];
      const size_t mark = nodes.size();
      const ir::Node* coef = producer(v, "Mul");
      if (coef && cube_of(operand_besides(*coef, 0.044715), x)) return x;
      nodes.resize(mark);
    }
    return ir::kNoValue;
  }

  // w = Pow(x, 3), or x * x * x as (x * x) * x in any operand order.
  bool cube_of(int w, int x) {
    if (w == ir::kNoValue) return false;
    const int p = ix_.producers[static_cast<size_t>(w)];
    if (p >= 0 && is_op(g_.nodes[static_cast<size_t>(p)], "Pow")) {
      const ir::Node* pow = producer(w, "Pow");
      double e;
      return pow && pow->inputs[0] == x && scalar_constant(g_, pow->inputs[1], &e) && e == 3.0;
    }
    const ir::Node* outer = producer(w, "Mul");
    if (!outer) return false;
    const int sq = other_input(*outer, x);
    const ir::Node* inner = producer(sq, "Mul");
    return inner && inner->inputs[0] == x && inner->inputs[1] == x;
  }

  // From e = Erf(...) / Tanh(...): p = 1 + e, then the products with x and 0.5; the output.
  int tail(int e, int x) {
    const ir::Node* plus = reader(e, "Add");
    if (!plus || operand_besides(*plus, 1.0) != e) return ir::kNoValue;
    const int p = plus->outputs[0];
    const ir::Node* m1 = reader(p, "Mul");
    if (!m1) return ir::kNoValue;
    const int q = other_input(*m1, p);
    const int v1 = m1->outputs[0];
    if (q == x) {  // (x * p) * 0.5
      const ir::Node* m2 = reader(v1, "Mul");
      return m2 && operand_besides(*m2, 0.5) == v1 ? m2->outputs[0] : ir::kNoValue;
    }
    if (operand_besides(*m1, 0.5) == p) {  // x * (p * 0.5)
      const ir::Node* m2 = reader(v1, "Mul");
      return m2 && other_input(*m2, v1) == x ? m2->outputs[0] : ir::kNoValue;
    }
    const ir::Node* half = producer(q, "Mul");  // (x * 0.5) * p
    return half && operand_besides(*half, 0.5) == x ? v1 : ir::kNoValue;
  }

  const ir::Graph& g_;
  const GraphIndex& ix_;
};

class GeluFusion final : public Pass {
 public:
  const char* name() const override { return "gelu_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    GeluMatcher matcher(g, ix);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& f = g.nodes[i];
      const bool tanh_form = is_op(f, "Tanh");
      if (dead[i] || !(is_op(f, "Erf") || tanh_form)) continue;
      int x = ir::kNoValue, y = ir::kNoValue;
      if (!matcher.match(f, tanh_form, &x, &y)) continue;
      // The last node of the chain (the one writing y) becomes the Gelu.
      const int last = ix.producers[static_cast<size_t>(y)];
      if (!claim_match(matcher.nodes, last, &dead)) continue;
      dead[i] = static_cast<int>(i) != last;
      ir::Node& gelu = g.nodes[static_cast<size_t>(last)];
      gelu.op_type = "Gelu";
      gelu.domain = kOspreyDomain;
      gelu.opset = 1;
      gelu.inputs = {x};
      gelu.attributes.clear();
      ir::Attribute a;
      a.type = ir::Attribute::Type::kString;
      a.s = tanh_form ? "tanh" : "none";
      gelu.attributes["approximate"] = a;
      gelu.kernel = nullptr;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_gelu_fusion() {
  return std::make_unique<GeluFusion>();
}

}  // namespace osprey::passes
