// transpose_reshape_cancellation (level 2): back-to-back layout ops collapse.
//   Transpose(p2) of Transpose(p1)  -> one Transpose with perm p1[p2[i]], or nothing when that is
//                                      the identity (readers then read the first one's input);
//   Reshape(s2) of Reshape(s1)      -> Reshape(s2) of the first one's input, when s2 is a constant
//                                      without 0 entries (a 0 would copy a dim of the middle
//                                      value) and neither sets allowzero.
// The middle value must have no other use. A graph output keeps its name: when the pair cancels
// into nothing and the last output is a graph output, the pair is left alone.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

bool perm_of(const ir::Node& n, std::vector<int64_t>* perm) {
  const auto* a = n.find_attribute("perm");
  if (!a || a->type != ir::Attribute::Type::kInts) return false;  // default perm: rank unknown
  *perm = a->ints;
  return true;
}

bool allowzero(const ir::Node& n) {
  const auto* a = n.find_attribute("allowzero");
  return a && (a->type != ir::Attribute::Type::kInt || a->i != 0);
}

class TransposeReshapeCancellation final : public Pass {
 public:
  const char* name() const override { return "transpose_reshape_cancellation"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    return rewrite_until_fixed_point(g, ctx.in_subgraph, rewrite);
  }

 private:
  // Node i is the second of a pair; true when the graph changed.
  static bool rewrite(ir::Graph& g, const GraphIndex& ix, size_t i) {
    ir::Node& second = g.nodes[i];
    const bool transpose = is_op(second, "Transpose");
    if ((!transpose && !is_op(second, "Reshape")) || second.outputs.size() != 1 ||
        second.inputs.empty())
      return false;
    const int mid = second.inputs[0];
    if (ix.sole_reader(mid) != static_cast<int>(i)) return false;
    const int p = ix.producers[static_cast<size_t>(mid)];
    if (p < 0) return false;
    const ir::Node& first = g.nodes[static_cast<size_t>(p)];
    if (first.op_type != second.op_type || !first.domain.empty() || first.outputs.size() != 1 ||
        first.inputs.empty())
      return false;
    std::vector<bool> dead(g.nodes.size(), false);
    if (transpose) {
      std::vector<int64_t> p1, p2;
      if (!perm_of(first, &p1) || !perm_of(second, &p2) || p1.size() != p2.size()) return false;
      std::vector<int64_t> composed;
      bool identity = true;
      for (size_t k = 0; k < p2.size(); ++k) {
        if (p2[k] < 0 || p2[k] >= static_cast<int64_t>(p1.size())) return false;
        composed.push_back(p1[static_cast<size_t>(p2[k])]);
        identity = identity && composed.back() == static_cast<int64_t>(k);
      }
      if (identity) {
        const int y = second.outputs[0];
        if (ix.uses.output[static_cast<size_t>(y)] || ix.uses.captured[static_cast<size_t>(y)])
          return false;
        replace_uses(g, y, first.inputs[0]);
        dead[i] = true;
      } else {
        second.attributes["perm"].ints = composed;
      }
    } else {
      if (second.inputs.size() != 2 || allowzero(first) || allowzero(second)) return false;
      const Tensor* s2 = constant_tensor(g, second.inputs[1]);
      if (!s2 || s2->dtype() != DType::kInt64) return false;
      for (int64_t k = 0; k < s2->numel(); ++k)
        if (s2->data<int64_t>()[k] == 0) return false;
    }
    second.inputs[0] = first.inputs[0];
    dead[static_cast<size_t>(p)] = true;
    erase_nodes(g, dead);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_transpose_reshape_cancellation() {
  return std::make_unique<TransposeReshapeCancellation>();
}

}  // namespace osprey::passes
