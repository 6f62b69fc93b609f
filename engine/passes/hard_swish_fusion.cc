// hard_swish_fusion (level 2): a decomposed HardSwish on float32 becomes one HardSwish, which
// conv_activation_fusion then folds into the convolution before it.
//   clip form:         x * Clip(x + 3, 0, 6) / 6    (or * 0.16666..; the Clip's product with x
//                      in either operand order, the 3 on either side of the Add)
//   hard-sigmoid form: x * HardSigmoid(x, alpha = 1/6, beta = 0.5)
// PaddlePaddle's exports (PP-OCR's and PP-LCNet's backbones) write it the first way, 24 times
// in PP-OCRv4's text detector. Constants are float32 scalars checked to a relative tolerance of
// 1e-4. Every intermediate value must have no other use; x may have others. The node writing
// the result becomes the HardSwish.
#include <algorithm>

#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

constexpr int kHardSwishSince = 14;

// From the gate g(x) (Clip(x + 3, 0, 6) or HardSigmoid(x)) node `gate`: the node writing
// x * gate / 6 (clip form) or x * gate (hard-sigmoid form), with the matched nodes in `nodes`;
// -1 when the chain is not there.
int tail(const ir::Graph& g, const GraphIndex& ix, const ir::Node& gate, int x, bool clip_form,
         std::vector<int>* nodes) {
  const int gv = gate.outputs[0];
  const int m = sole_binary_reader(g, ix, gv, "Mul");
  if (m < 0 || other_input(g.nodes[static_cast<size_t>(m)], gv) != x) return -1;
  nodes->push_back(m);
  if (!clip_form) return m;
  const int mv = g.nodes[static_cast<size_t>(m)].outputs[0];
  if (const int d = sole_binary_reader(g, ix, mv, "Div"); d >= 0) {
    double c;
    const ir::Node& div = g.nodes[static_cast<size_t>(d)];
    if (div.inputs[0] != mv || !scalar_constant(g, div.inputs[1], &c) || !near(c, 6.0)) return -1;
    nodes->push_back(d);
    return d;
  }
  const int s = sole_binary_reader(g, ix, mv, "Mul");
  if (s < 0 || operand_besides(g, g.nodes[static_cast<size_t>(s)], 1.0 / 6.0) != mv) return -1;
  nodes->push_back(s);
  return s;
}

// Node `i` as the gate of a decomposed HardSwish: x, the node writing the result and every
// matched node; false when it is not one.
bool match(const ir::Graph& g, const GraphIndex& ix, int i, int* x, int* last, std::vector<int>* nodes) {
  const ir::Node& gate = g.nodes[static_cast<size_t>(i)];
  if (gate.outputs.size() != 1 || gate.outputs[0] == ir::kNoValue || gate.inputs.empty() || gate.inputs[0] < 0)
    return false;
  nodes->assign(1, i);
  if (is_op(gate, "Clip")) {
    std::vector<float> bounds;
    if (!clip_bounds(g, gate, &bounds) || bounds[0] != 0.0f || !near(bounds[1], 6.0)) return false;
    const int a = gate.inputs[0];
    const int p = ix.producers[static_cast<size_t>(a)];
    if (p < 0 || ix.sole_reader(a) != i) return false;
    const ir::Node& add = g.nodes[static_cast<size_t>(p)];
    if (!is_op(add, "Add") || add.outputs.size() != 1) return false;
    *x = operand_besides(g, add, 3.0);
    if (*x == ir::kNoValue) return false;
    nodes->push_back(p);
    *last = tail(g, ix, gate, *x, true, nodes);
  } else if (is_op(gate, "HardSigmoid")) {
    const ir::Attribute* alpha = gate.find_attribute("alpha");
    const ir::Attribute* beta = gate.find_attribute("beta");
    if (!alpha || alpha->type != ir::Attribute::Type::kFloat || !near(alpha->f, 1.0 / 6.0) ||
        (beta && (beta->type != ir::Attribute::Type::kFloat || !near(beta->f, 0.5))))
      return false;
    *x = gate.inputs[0];
    *last = tail(g, ix, gate, *x, false, nodes);
  } else {
    return false;
  }
  return *last >= 0 && ix.dtype(*x) == DType::kFloat32;
}

class HardSwishFusion final : public Pass {
 public:
  const char* name() const override { return "hard_swish_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    const int opset = std::max(kHardSwishSince, default_opset(g));
    std::vector<bool> dead(g.nodes.size(), false);
    std::vector<int> nodes;
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      int x = ir::kNoValue, last = -1;
      if (dead[i] || !match(g, ix, static_cast<int>(i), &x, &last, &nodes)) continue;
      if (!claim_match(nodes, last, &dead)) continue;
      ir::Node& hs = g.nodes[static_cast<size_t>(last)];
      hs.op_type = "HardSwish";
      hs.domain.clear();
      hs.opset = opset;
      hs.inputs = {x};
      hs.attributes.clear();
      hs.kernel = nullptr;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_hard_swish_fusion() {
  return std::make_unique<HardSwishFusion>();
}

}  // namespace osprey::passes
