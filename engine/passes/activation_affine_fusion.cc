// activation_affine_fusion (level 2): a com.osprey FusedConv or FusedMatMul (float32) whose
// output only a Mul by a scalar constant reads, or an Add of one, or a Mul then an Add, takes
// them as its activation_affine = [scale, shift]: Y = act(...) * scale + shift, one more
// post-op in the primitive instead of two passes over the tensor. PP-LCNetV3 (the backbone of
// PP-OCRv4's detector and recognizer) follows every HardSwish with such a learnable affine
// (x * w + b, w and b scalars): 20 pairs in the detector. Runs after the activation fusions
// (the affine comes after the activation); a node that has one already is left alone.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

bool fusable_node(const ir::Node& n) {
  return n.domain == kOspreyDomain && (n.op_type == "FusedConv" || n.op_type == "FusedMatMul") &&
         n.outputs.size() == 1 && n.outputs[0] != ir::kNoValue && !n.find_attribute("activation_affine");
}

// The sole reader of `v` if it is `op` (Mul or Add) with a float32 scalar constant as its other
// operand: the node and the constant; -1 otherwise.
int scalar_reader(const ir::Graph& g, const GraphIndex& ix, int v, const char* op, double* c) {
  const int r = sole_binary_reader(g, ix, v, op);
  if (r < 0) return -1;
  const ir::Node& n = g.nodes[static_cast<size_t>(r)];
  const int other = other_input(n, v);
  if (other == ir::kNoValue || other == v || !scalar_constant(g, other, c)) return -1;
  const Tensor* t = constant_tensor(g, other);
  return t && t->rank() <= ix.facts.shapes[static_cast<size_t>(v)].size() ? r : -1;
}

class ActivationAffineFusion final : public Pass {
 public:
  const char* name() const override { return "activation_affine_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (dead[i] || !fusable_node(n)) continue;
      const int y = n.outputs[0];
      // The scalar must not raise the output's rank (its shape must be known to check).
      if (!ix.facts.has_shape[static_cast<size_t>(y)] || ix.dtype(y) != DType::kFloat32) continue;
      double scale = 1.0, shift = 0.0;
      int last = -1, out = y;
      std::vector<int> nodes;
      if (const int m = scalar_reader(g, ix, out, "Mul", &scale); m >= 0) {
        nodes.push_back(m);
        last = m;
        out = g.nodes[static_cast<size_t>(m)].outputs[0];
        if (!ix.facts.has_shape[static_cast<size_t>(out)]) continue;
      }
      if (const int a = scalar_reader(g, ix, out, "Add", &shift); a >= 0) {
        nodes.push_back(a);
        last = a;
        out = g.nodes[static_cast<size_t>(a)].outputs[0];
      }
      if (last < 0 || !claim_match(nodes, static_cast<int>(i), &dead)) continue;
      ir::Attribute attr;
      attr.type = ir::Attribute::Type::kFloats;
      attr.floats = {static_cast<float>(scale), static_cast<float>(shift)};
      n.attributes["activation_affine"] = attr;
      n.outputs[0] = out;
      n.kernel = nullptr;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_activation_affine_fusion() {
  return std::make_unique<ActivationAffineFusion>();
}

}  // namespace osprey::passes
