// conv_activation_fusion (level 2): a float32 Conv (or a FusedConv without activation) followed
// by an activation becomes one com.osprey FusedConv with `activation` set:
//   Relu, Clip (constant bounds), LeakyRelu, Sigmoid, HardSigmoid, HardSwish, Tanh,
//   x * Sigmoid(x) (Silu), Gelu (ours from gelu_fusion, or ONNX's), Mish.
// The Conv's output must have no other use (no other reader, not a graph output, not read by
// a subgraph); the activation's output becomes the FusedConv's. Runs after conv_add_fusion, so
// Conv -> Add(residual) -> Relu ends as one node: act(Conv + B + Z).
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {

// A float32 Conv, or a FusedConv that has no activation yet.
bool conv_fusable(const ir::Node& n, const GraphIndex& ix) {
  if (n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue || n.inputs.size() < 2) return false;
  if (n.domain == kOspreyDomain && n.op_type == "FusedConv") return activation_of(n).empty();
  if (!is_op(n, "Conv") || n.inputs.size() > 3) return false;
  return ix.dtype(n.inputs[1]) == DType::kFloat32 || ix.dtype(n.inputs[0]) == DType::kFloat32;
}

namespace {

class ConvActivationFusion final : public Pass {
 public:
  const char* name() const override { return "conv_activation_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (dead[i] || !conv_fusable(n, ix)) continue;
      ActivationMatch m;
      if (!match_activation(g, ix, n.outputs[0], &m)) continue;
      if (n.op_type == "Conv") make_fused(n, "FusedConv", 4);
      set_activation(n, m);
      n.outputs[0] = m.output;
      for (int d : m.nodes) dead[static_cast<size_t>(d)] = true;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_activation_fusion() {
  return std::make_unique<ConvActivationFusion>();
}

}  // namespace osprey::passes
