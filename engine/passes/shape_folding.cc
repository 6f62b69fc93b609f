// shape_folding (level 1): shape computations whose result is known before the graph runs
// become constants. Shape of a value whose shape is fully static, and the int64 values computed
// from shapes (Gather, Slice, Concat, Unsqueeze, Squeeze, Cast; int32 ones too, between a Cast
// to int32 and one back) when every element is a fixed number, are replaced by initializers of
// their type; constant_folding and dead_code_elimination then finish
// the Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains. Shapes come from
// shape_inference.h: declared main-graph inputs, constants and the ops it knows. A symbolic dim
// (a dynamic batch or sequence length) is never folded: a Gather that picks one stays, except
// where a Reshape (allowzero 0) keeps it in place: a target whose entries are numbers, -1, or
// the input's own dim at the same position (x.view(x.size(0), -1)) becomes a constant with 0
// ("copy") there, so that the Shape chain feeding it goes dead.
#include <cstdint>
#include <set>

#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/shape_inference.h"

namespace osprey::passes {
namespace {

bool folds(const ir::Node& n) {
  static const std::set<std::string> kOps = {"Shape",     "Gather",  "Slice", "Concat",
                                             "Unsqueeze", "Squeeze", "Cast",  "Identity"};
  return n.domain.empty() && kOps.count(n.op_type) && n.outputs.size() == 1 &&
         n.outputs[0] != ir::kNoValue;
}

class ShapeFolding final : public Pass {
 public:
  const char* name() const override { return "shape_folding"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    const ShapeFacts facts = infer_shapes(g, ctx.in_subgraph);
    const std::vector<int> producers = compute_producers(g);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const ir::Node& n = g.nodes[i];
      if (!folds(n)) continue;
      const int y = n.outputs[0];
      const auto yi = static_cast<size_t>(y);
      if (!facts.has_contents[yi] || !facts.has_shape[yi] || facts.shapes[yi].size() > 1) continue;
      const SymShape& c = facts.contents[yi];
      bool fixed = true;
      for (const SymDim& d : c) fixed = fixed && d.fixed();
      if (!fixed) continue;
      const bool scalar = facts.shapes[yi].empty();
      if (scalar && c.size() != 1) continue;
      // Shape values are int64, or int32 between a Cast to int32 and one back.
      const DType type = known_dtype(g, y, producers, ctx.in_subgraph);
      if (type != DType::kInt64 && type != DType::kInt32) continue;
      bool fits = true;
      for (const SymDim& d : c) fits = fits && (type == DType::kInt64 || d.value <= INT32_MAX);
      if (!fits) continue;
      Tensor t(type, scalar ? Shape{} : Shape{static_cast<int64_t>(c.size())});
      for (size_t k = 0; k < c.size(); ++k) {
        if (type == DType::kInt64) t.data<int64_t>()[k] = c[k].value;
        else t.data<int32_t>()[k] = static_cast<int32_t>(c[k].value);
      }
      g.initializers[y] = std::move(t);
      dead[i] = true;
      changed = true;
    }
    for (ir::Node& n : g.nodes) changed = constant_reshape_target(g, facts, n) || changed;
    if (changed) erase_nodes(g, dead);
    return changed;
  }

 private:
  static bool constant_reshape_target(ir::Graph& g, const ShapeFacts& facts, ir::Node& n) {
    if (n.op_type != "Reshape" || !n.domain.empty() || n.inputs.size() != 2) return false;
    const ir::Attribute* allowzero = n.find_attribute("allowzero");
    if (allowzero && allowzero->i != 0) return false;
    const int x = n.inputs[0], t = n.inputs[1];
    if (x == ir::kNoValue || t == ir::kNoValue || g.initializers.count(t)) return false;
    const auto xi = static_cast<size_t>(x), ti = static_cast<size_t>(t);
    if (!facts.has_contents[ti] || !facts.has_shape[xi]) return false;
    const SymShape& target = facts.contents[ti];
    const SymShape& xs = facts.shapes[xi];
    Tensor c(DType::kInt64, Shape{static_cast<int64_t>(target.size())});
    for (size_t k = 0; k < target.size(); ++k) {
      const SymDim& d = target[k];
      if (d.fixed()) c.data<int64_t>()[k] = d.value;
      else if (is_infer_marker(d)) c.data<int64_t>()[k] = -1;
      else if (k < xs.size() && !xs[k].fixed() && d == xs[k]) c.data<int64_t>()[k] = 0;
      else return false;
    }
    n.inputs[1] = add_initializer(g, g.values[ti].name + "_constant", std::move(c));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_shape_folding() {
  return std::make_unique<ShapeFolding>();
}

}  // namespace osprey::passes
