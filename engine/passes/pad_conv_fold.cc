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

// The Pad's pads (2 * rank entries), or false when it is not a foldable zero padding.
bool zero_padding(const ir::Graph& g, const ir::Node& pad, std::vector<int64_t>* pads) {
  if (!is_op(pad, "Pad") || pad.inputs.empty() || pad.outputs.size() != 1) return false;
  if (const auto* mode = pad.find_attribute("mode"); mode && mode->s != "constant") return false;
  if (pad.opset < 11) {  // pads and value are attributes
    const auto* p = pad.find_attribute("pads");
    if (!p || p->type != ir::Attribute::Type::kInts) return false;
    *pads = p->ints;
    if (const auto* v = pad.find_attribute("value"); v && v->f != 0.0f) return false;
  } else {
    if (input_at(pad, 3) != ir::kNoValue) return false;  // axes
    const Tensor* p = constant_tensor(g, input_at(pad, 1));
    if (!p || p->dtype() != DType::kInt64 || p->rank() != 1) return false;
    pads->assign(p->data<int64_t>(), p->data<int64_t>() + p->numel());
    const int cv = input_at(pad, 2);
    if (cv != ir::kNoValue) {
      double v = 1;
      if (!scalar_constant(g, cv, &v) || v != 0.0) return false;
    }
  }
  const size_t r = pads->size() / 2;
  if (pads->size() % 2 != 0 || r < 3) return false;
  for (int64_t v : *pads)
    if (v < 0) return false;
  return (*pads)[0] == 0 && (*pads)[1] == 0 && (*pads)[r] == 0 && (*pads)[r + 1] == 0;
}

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
