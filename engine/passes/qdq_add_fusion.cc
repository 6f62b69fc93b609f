// qdq_add_fusion (level 2): the residual sum of a model quantized in the QDQ format,
//   a_q -> DequantizeLinear --\
//                              Add [-> Relu] -> QuantizeLinear -> y_q
//   b_q -> DequantizeLinear --/
// becomes one com.osprey QLinearAdd(a_q, a_scale, a_zp, b_q, b_scale, b_zp, y_scale, y_zp)
// with activation "Relu" when there is one. The fused op computes the same float operations
// in the same order (engine/kernels/reference/quantize.cc), in one pass over the bytes instead
// of five over floats: ResNet50 int8 spent a quarter of its time in these nodes.
// What matches: per-tensor quantizations (one-value constant parameters); a and b of one known
// shape (no broadcasting); the Add's output (and the Relu's) read by nothing else. The
// DequantizeLinear nodes stay when something else reads them.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

struct Match {
  const ir::Node* a = nullptr;  // the two DequantizeLinear nodes
  const ir::Node* b = nullptr;
  int relu = -1, q = -1;
};

bool match(const ir::Graph& g, const GraphIndex& ix, const ir::Node& add, Match* m) {
  if (!is_op(add, "Add") || add.inputs.size() != 2 || add.outputs.size() != 1 || add.outputs[0] < 0) return false;
  m->a = producer_op(g, ix, add.inputs[0], "DequantizeLinear");
  m->b = producer_op(g, ix, add.inputs[1], "DequantizeLinear");
  if (!m->a || !m->b || !per_tensor_quantization(g, *m->a) || !per_tensor_quantization(g, *m->b)) return false;
  const int av = m->a->inputs[0], bv = m->b->inputs[0];
  const auto u = static_cast<size_t>(av);
  if (!ix.facts.has_shape[u] || !ix.facts.same_shape(av, bv)) return false;
  int y = add.outputs[0];
  int r = ix.sole_reader(y);
  if (r < 0) return false;
  if (is_op(g.nodes[static_cast<size_t>(r)], "Relu")) {
    m->relu = r;
    y = g.nodes[static_cast<size_t>(r)].outputs[0];
    r = y < 0 ? -1 : ix.sole_reader(y);
    if (r < 0) return false;
  }
  const ir::Node& q = g.nodes[static_cast<size_t>(r)];
  if (!is_op(q, "QuantizeLinear") || q.inputs[0] != y || !per_tensor_quantization(g, q)) return false;
  m->q = r;
  return true;
}

class QdqAddFusion final : public Pass {
 public:
  const char* name() const override { return "qdq_add_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Match m;
      if (dead[i] || !match(g, ix, g.nodes[i], &m)) continue;
      std::vector<int> nodes = {static_cast<int>(i), m.q};
      if (m.relu >= 0) nodes.push_back(m.relu);
      if (!claim_match(nodes, static_cast<int>(i), &dead)) continue;
      const ir::Node a = *m.a, b = *m.b, q = g.nodes[static_cast<size_t>(m.q)];
      auto zero_point = [&](const ir::Node& n) {  // the fused op takes all eight inputs
        const int z = input_at(n, 2);
        if (z != ir::kNoValue) return z;
        return add_initializer(g, g.values[static_cast<size_t>(n.outputs[0])].name + "_zero_point",
                               Tensor::from_vector(std::vector<uint8_t>{0}));
      };
      ir::Node& n = g.nodes[i];
      n.inputs = {a.inputs[0], a.inputs[1], zero_point(a), b.inputs[0], b.inputs[1], zero_point(b),
                  q.inputs[1], zero_point(q)};
      n.outputs = {q.outputs[0]};
      n.op_type = "QLinearAdd";
      n.domain = kOspreyDomain;
      n.opset = 1;
      n.kernel = nullptr;
      n.attributes.clear();
      if (m.relu >= 0) {
        ActivationMatch am;
        am.name = "Relu";
        set_activation(n, am);
      }
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_qdq_add_fusion() {
  return std::make_unique<QdqAddFusion>();
}

}  // namespace osprey::passes
