// inline_captured_constants (level 1, after the first constant_folding): a constant of a graph that one of its nodes'
// subgraphs reads (a capture: If / Loop / Scan bodies reading outer weights) becomes an
// initializer of that subgraph too, sharing the tensor's storage. The subgraph's passes then see
// it as a constant: constant_folding runs the weight re-arrangements exporters leave inside
// branches (silero-vad's LSTM weights sliced into gates and concatenated again on every run),
// and the fusions can match. It follows the first constant_folding (exporters write weights
// as Constant nodes, which that makes initializers) and runs on the main graph first, then
// inward, so constants reach nested subgraphs level by level. Graph inputs backed by initializers stay captures (the
// caller may override them).
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

class InlineCapturedConstants final : public Pass {
 public:
  const char* name() const override { return "inline_captured_constants"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext&) override {
    bool changed = false;
    for (auto& n : g.nodes)
      for (auto& [key, a] : n.attributes) {
        std::vector<ir::Graph*> subs;
        if (a.g) subs.push_back(a.g.get());
        for (auto& sg : a.graphs) subs.push_back(sg.get());
        for (ir::Graph* sg : subs) {
          if (sg->captures.size() != sg->capture_sources.size()) continue;
          for (size_t k = 0; k < sg->captures.size(); ++k) {
            const Tensor* t = constant_tensor(g, sg->capture_sources[k]);
            const int local = sg->captures[k];
            if (!t || sg->initializers.count(local)) continue;
            sg->initializers[local] = *t;
            sg->values[static_cast<size_t>(local)].type = tensor_value_type(*t);
            changed = true;
          }
        }
      }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_inline_captured_constants() {
  return std::make_unique<InlineCapturedConstants>();
}

}  // namespace osprey::passes
