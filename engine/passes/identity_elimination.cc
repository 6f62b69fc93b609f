// identity_elimination (level 1): removes nodes that pass their input through unchanged:
//   Identity; Dropout in inference mode whose mask output is unused; Cast to the type its input
//   already has; Reshape to the shape its input already has.
// Readers of the node's output are pointed at its input. When the output is a graph output,
// the producer of the input is renamed instead (only when the input has no other use), so the
// graph keeps its output names. Values read by subgraphs (captured by name) are never touched.
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

// True for an input of the main graph without a default: the session checks the dtype, rank
// and fixed dims of those against the declaration. (Subgraph inputs are bound by kernels.)
bool checked_input(const ir::Graph& g, int id, const PassContext& ctx) {
  return !ctx.in_subgraph && is_graph_input(g, id) && !g.initializers.count(id) &&
         g.values[static_cast<size_t>(id)].type.kind == ir::ValueType::Kind::kTensor;
}

// Element type of `id` when it is certain: a constant, a checked input or a Cast's output.
DType known_dtype(const ir::Graph& g, int id, const std::vector<int>& producer,
                  const PassContext& ctx) {
  if (const Tensor* t = constant_tensor(g, id)) return t->dtype();
  if (checked_input(g, id, ctx)) return g.values[static_cast<size_t>(id)].type.dtype;
  const int p = producer[static_cast<size_t>(id)];
  if (p >= 0) {
    const ir::Node& n = g.nodes[static_cast<size_t>(p)];
    if (n.op_type == "Cast" && n.domain.empty())
      if (const auto* to = n.find_attribute("to"); to && to->type == ir::Attribute::Type::kInt)
        return static_cast<DType>(to->i);
  }
  return DType::kUndefined;
}

// Shape of `id` when it is certain: a constant, or a checked input declared with fixed dims
// only. False when unknown.
bool known_shape(const ir::Graph& g, int id, const PassContext& ctx, Shape* out) {
  if (const Tensor* t = constant_tensor(g, id)) {
    *out = t->shape();
    return true;
  }
  if (!checked_input(g, id, ctx)) return false;
  const ir::ValueType& vt = g.values[static_cast<size_t>(id)].type;
  if (vt.kind != ir::ValueType::Kind::kTensor || !vt.has_shape) return false;
  out->clear();
  for (const Dim& d : vt.shape) {
    if (!d.is_fixed()) return false;
    out->push_back(d.value);
  }
  return true;
}

bool is_passthrough(const ir::Graph& g, const ir::Node& n, const ValueUses& uses,
                    const std::vector<int>& producer, const PassContext& ctx) {
  if (!n.domain.empty() || n.inputs.empty() || n.inputs[0] == ir::kNoValue || n.outputs.empty() ||
      n.outputs[0] == ir::kNoValue)
    return false;
  if (n.op_type == "Identity") return n.inputs.size() == 1 && n.outputs.size() == 1;
  if (n.op_type == "Dropout") {
    // The mask output, if any, must be unused.
    for (size_t i = 1; i < n.outputs.size(); ++i)
      if (n.outputs[i] != ir::kNoValue && uses.used(n.outputs[i])) return false;
    if (n.opset < 12) return true;  // inference only (the kernel ignores is_test too)
    if (n.inputs.size() < 3 || n.inputs[2] == ir::kNoValue) return true;
    const Tensor* training = constant_tensor(g, n.inputs[2]);
    return training && training->dtype() == DType::kBool && training->numel() == 1 &&
           !training->data<bool>()[0];
  }
  if (n.op_type == "Cast") {
    if (n.outputs.size() != 1) return false;
    const auto* to = n.find_attribute("to");
    if (!to || to->type != ir::Attribute::Type::kInt) return false;
    const DType in = known_dtype(g, n.inputs[0], producer, ctx);
    return in != DType::kUndefined && in != DType::kString && static_cast<DType>(to->i) == in;
  }
  if (n.op_type == "Reshape") {
    if (n.opset < 5 || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
    const Tensor* target = constant_tensor(g, n.inputs[1]);
    Shape in;
    if (!target || target->dtype() != DType::kInt64 || target->rank() != 1 ||
        !known_shape(g, n.inputs[0], ctx, &in))
      return false;
    if (target->numel() != static_cast<int64_t>(in.size())) return false;
    const auto* az = n.find_attribute("allowzero");
    const bool allowzero = az && az->type == ir::Attribute::Type::kInt && az->i != 0;
    // The same shape, dim by dim: a dim equal to the input's, 0 (copy, unless allowzero), or a
    // single -1 that can only infer the input's own dim since all others match.
    int minus_ones = 0;
    for (size_t d = 0; d < in.size(); ++d) {
      const int64_t t = target->data<int64_t>()[d];
      if (t == in[d]) continue;
      if (t == 0 && !allowzero) continue;
      if (t == -1 && ++minus_ones == 1 && in[d] != 0) continue;
      return false;
    }
    return true;
  }
  return false;
}

class IdentityElimination final : public Pass {
 public:
  const char* name() const override { return "identity_elimination"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    bool changed = false;
    std::vector<bool> dead(g.nodes.size(), false);
    // One node at a time: uses and producers are recomputed after each rewrite (graphs are
    // small compared to the cost of getting a chained rewrite wrong).
    for (bool progress = true; progress;) {
      progress = false;
      const ValueUses uses = compute_uses(g);
      std::vector<int> producer(g.values.size(), -1);
      for (size_t i = 0; i < g.nodes.size(); ++i)
        if (!dead[i])
          for (int o : g.nodes[i].outputs)
            if (o != ir::kNoValue) producer[static_cast<size_t>(o)] = static_cast<int>(i);
      for (size_t i = 0; i < g.nodes.size() && !progress; ++i) {
        if (dead[i]) continue;
        ir::Node& n = g.nodes[i];
        if (!is_passthrough(g, n, uses, producer, ctx)) continue;
        const int x = n.inputs[0];
        const int y = n.outputs[0];
        if (uses.captured[static_cast<size_t>(y)]) continue;
        if (!uses.output[static_cast<size_t>(y)]) {
          replace_uses(g, y, x);
        } else {
          // y must keep its name: let x's producer write y directly.
          const int p = producer[static_cast<size_t>(x)];
          if (p < 0 || uses.output[static_cast<size_t>(x)] ||
              uses.captured[static_cast<size_t>(x)] || uses.readers[static_cast<size_t>(x)] != 1)
            continue;
          for (int& o : g.nodes[static_cast<size_t>(p)].outputs)
            if (o == x) o = y;
        }
        dead[i] = true;
        progress = changed = true;
      }
      // Dead nodes no longer read anything (their inputs must not count as uses).
      for (size_t i = 0; i < g.nodes.size(); ++i)
        if (dead[i]) {
          g.nodes[i].inputs.clear();
          g.nodes[i].outputs.clear();
          g.nodes[i].implicit_inputs.clear();
        }
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() {
  return std::make_unique<IdentityElimination>();
}

}  // namespace osprey::passes
