// dead_code_elimination (level 1): removes nodes none of whose outputs is read (by a node, a
// subgraph capture or as a graph output), repeatedly, and initializers nothing reads (those
// that are also graph inputs stay: they are part of the model's interface).
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

class DeadCodeElimination final : public Pass {
 public:
  const char* name() const override { return "dead_code_elimination"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext&) override {
    // Reverse topological sweep: a node is live if one of its outputs is read by a live node.
    std::vector<bool> live_value(g.values.size(), false);
    for (int o : g.outputs) live_value[static_cast<size_t>(o)] = true;
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t k = g.nodes.size(); k-- > 0;) {
      const ir::Node& n = g.nodes[k];
      bool live = false;
      for (int o : n.outputs)
        live = live || (o != ir::kNoValue && live_value[static_cast<size_t>(o)]);
      if (!live) {
        dead[k] = changed = true;
        continue;
      }
      for (int i : n.inputs)
        if (i != ir::kNoValue) live_value[static_cast<size_t>(i)] = true;
      for (int i : n.implicit_inputs) live_value[static_cast<size_t>(i)] = true;
    }
    if (changed) erase_nodes(g, dead);
    for (auto it = g.initializers.begin(); it != g.initializers.end();) {
      if (!live_value[static_cast<size_t>(it->first)] && !is_graph_input(g, it->first)) {
        it = g.initializers.erase(it);
        changed = true;
      } else {
        ++it;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code_elimination() {
  return std::make_unique<DeadCodeElimination>();
}

}  // namespace osprey::passes
