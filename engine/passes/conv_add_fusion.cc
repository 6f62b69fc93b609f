// conv_add_fusion (level 2): a float32 Conv (or FusedConv without residual or activation)
// whose output is added to a value of exactly the same shape (a residual, not a broadcast:
// shapes are proven equal by shape_inference.h) becomes a com.osprey FusedConv with that value
// as its input Z: Y = Conv(X, W) + B + Z. The Conv's output must have no other use, and Z must
// not depend on the Conv (it becomes the Conv's input). conv_activation_fusion, which runs
// next, then takes the activation after the Add.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {

bool conv_fusable(const ir::Node& n, const GraphIndex& ix);  // conv_activation_fusion.cc

namespace {

class ConvAddFusion final : public Pass {
 public:
  const char* name() const override { return "conv_add_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (dead[i] || !conv_fusable(n, ix)) continue;
      if (n.op_type == "FusedConv" && input_at(n, 3) != ir::kNoValue) continue;
      int add = -1, z = ir::kNoValue;
      if (!match_residual_add(g, ix, n.outputs[0], static_cast<int>(i), &add, &z)) continue;
      if (dead[static_cast<size_t>(add)]) continue;
      if (n.op_type == "Conv") make_fused(n, "FusedConv", 4);
      n.inputs[3] = z;
      n.outputs[0] = g.nodes[static_cast<size_t>(add)].outputs[0];
      dead[static_cast<size_t>(add)] = true;
      changed = true;
      // The rewrite changed who produces what: recompute before the next match.
      erase_nodes(g, dead);
      dead.assign(g.nodes.size(), false);
      ix.refresh();
      i = static_cast<size_t>(-1);
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_add_fusion() {
  return std::make_unique<ConvAddFusion>();
}

}  // namespace osprey::passes
