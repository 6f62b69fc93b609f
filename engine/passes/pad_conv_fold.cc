// pad_conv_fold (level 1): a zero-padding Pad whose only reader is a Conv (or com.osprey
// FusedConv) as its input X becomes part of that convolution's `pads`:
//   Conv(Pad(x, pads = [0, 0, b1.., 0, 0, e1..]), pads = [p_b.., p_e..])
//     -> Conv(x, pads = [p_b + b.., p_e + e..])
// (the "static same padding" that TensorFlow- and timm-style exports put before convolutions).
// Conditions: Pad in mode "constant" with a constant value of 0 (or none), constant
// non-negative pads that leave the batch and channel dims alone, no `axes` input; the
// convolution has auto_pad NOTSET (or none) and reads the Pad's output only as X. The Pad's
// output must have no other use; dead_code_elimination drops the pads constants.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

bool foldable_conv(const ir::Node& n, int x) {
  const bool conv = is_op(n, "Conv") || (n.domain == kOspreyDomain && n.op_type == "FusedConv");
  if (!conv || n.inputs.empty() || n.inputs[0] != x) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] == x) return false;
  if (const auto* a = n.find_attribute("auto_pad"); a && a->s != "NOTSET" && !a->s.empty()) return false;
  return true;
}

class PadConvFold final : public Pass {
 public:
  const char* name() const override { return "pad_conv_fold"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    return rewrite_until_fixed_point(g, ctx.in_subgraph, rewrite);
  }

 private:
  static bool rewrite(ir::Graph& g, const GraphIndex& ix, size_t i) {
    const ir::Node& pad = g.nodes[i];
    std::vector<int64_t> pads;
    if (!zero_padding(g, pad, &pads)) return false;
    const int y = pad.outputs[0];
    const int reader = ix.sole_reader(y);
    if (reader < 0 || !foldable_conv(g.nodes[static_cast<size_t>(reader)], y)) return false;
    ir::Node& conv = g.nodes[static_cast<size_t>(reader)];
    const size_t r = pads.size() / 2, nd = r - 2;
    std::vector<int64_t> conv_pads(2 * nd, 0);
    if (const auto* a = conv.find_attribute("pads")) {
      if (a->type != ir::Attribute::Type::kInts || a->ints.size() != 2 * nd) return false;
      conv_pads = a->ints;
    }
    for (size_t d = 0; d < nd; ++d) {
      conv_pads[d] += pads[2 + d];
      conv_pads[nd + d] += pads[r + 2 + d];
    }
    ir::Attribute a;
    a.type = ir::Attribute::Type::kInts;
    a.ints = conv_pads;
    conv.attributes["pads"] = a;
    conv.attributes.erase("auto_pad");
    conv.inputs[0] = pad.inputs[0];
    std::vector<bool> dead(g.nodes.size(), false);
    dead[i] = true;
    erase_nodes(g, dead);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_pad_conv_fold() {
  return std::make_unique<PadConvFold>();
}

}  // namespace osprey::passes
