// pad_conv_fold (level 1): a zero-padding Pad whose only reader is a Conv (or com.osprey
// FusedConv) as its input X becomes part of that convolution's `pads`:
//   Conv(Pad(x, pads = [0, 0, b1.., 0, 0, e1..]), pads = [p_b.., p_e..])
//     -> Conv(x, pads = [p_b + b.., p_e + e..])
// (the "static same padding" that TensorFlow- and timm-style exports put before convolutions).
// A quantized convolution (ONNX's or com.osprey's QLinearConv) takes a Pad of its
// x_zero_point the same way: its own padding is x_zero_point too (a real 0), as a QOperator
// model pads with the quantized 0; and a float zero Pad before the QuantizeLinear that feeds
// it (per tensor, read by nothing else), which then quantizes the unpadded input. Likewise a
// float zero Pad before the DynamicQuantizeLinear of a dynamically quantized convolution
// (ConvInteger, x_zero_point the DynamicQuantizeLinear's): the range it computes always
// includes 0, so the zeros change neither scale nor zero point, and the quantized zeros are
// x_zero_point, which ConvInteger's own padding stands for.
// Conditions: Pad in mode "constant" with a constant value of 0 (or none; x_zero_point for
// QLinearConv and ConvInteger, whose padding stands for it), constant non-negative pads that leave the batch and channel dims alone, no
// `axes` input; the convolution has auto_pad NOTSET (or none) and reads the Pad's output only
// as X. The Pad's output must have no other use; dead_code_elimination drops the pads constants.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

bool is_qlinear_conv(const ir::Node& n) {
  return n.op_type == "QLinearConv" && (n.domain.empty() || n.domain == kOspreyDomain);
}

bool foldable_conv(const ir::Node& n, int x) {
  const bool conv = is_op(n, "Conv") || (n.domain == kOspreyDomain && n.op_type == "FusedConv") ||
                    is_qlinear_conv(n) || is_op(n, "ConvInteger");
  if (!conv || n.inputs.empty() || n.inputs[0] != x) return false;
  for (size_t i = 1; i < n.inputs.size(); ++i)
    if (n.inputs[i] == x) return false;
  if (const auto* a = n.find_attribute("auto_pad"); a && a->s != "NOTSET" && !a->s.empty()) return false;
  return true;
}

// The value the convolution's own padding stands for: x_zero_point for QLinearConv and
// ConvInteger (absent: 0), else 0. False when x_zero_point is not a one-value constant.
bool padding_value(const ir::Graph& g, const ir::Node& conv, double* v) {
  *v = 0;
  if ((!is_qlinear_conv(conv) && !is_op(conv, "ConvInteger")) || input_at(conv, 2) == ir::kNoValue) return true;
  const Tensor* z = constant_tensor(g, input_at(conv, 2));
  if (!z || z->numel() != 1) return false;
  *v = z->get_as_double(0);
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
    double value = 0, conv_value = 0;
    if (!constant_padding(g, pad, &pads, &value)) return false;
    int y = pad.outputs[0];
    int reader = ix.sole_reader(y);
    // A float zero Pad, then a per-tensor QuantizeLinear, then a QLinearConv (a quantized
    // model's first convolution): the Pad moves behind the quantization, where it pads with
    // the zero point (0 quantizes to it exactly), and folds into the convolution.
    ir::Node* quantize = nullptr;
    if (reader >= 0 && value == 0.0 && per_tensor_quantization(g, g.nodes[static_cast<size_t>(reader)]) &&
        is_op(g.nodes[static_cast<size_t>(reader)], "QuantizeLinear") &&
        g.nodes[static_cast<size_t>(reader)].inputs[0] == y) {
      quantize = &g.nodes[static_cast<size_t>(reader)];
      const int zp = input_at(*quantize, 2);
      value = zp == ir::kNoValue ? 0.0 : constant_tensor(g, zp)->get_as_double(0);
      y = quantize->outputs[0];
      reader = ix.sole_reader(y);
      if (reader >= 0 && !is_qlinear_conv(g.nodes[static_cast<size_t>(reader)])) return false;
    }
    // A float zero Pad, then DynamicQuantizeLinear, then ConvInteger with its zero point.
    bool dynamic = false;
    if (!quantize && reader >= 0 && value == 0.0 && is_op(g.nodes[static_cast<size_t>(reader)], "DynamicQuantizeLinear") &&
        g.nodes[static_cast<size_t>(reader)].inputs[0] == y && g.nodes[static_cast<size_t>(reader)].outputs.size() == 3) {
      quantize = &g.nodes[static_cast<size_t>(reader)];
      y = quantize->outputs[0];
      reader = ix.sole_reader(y);
      if (reader < 0 || !is_op(g.nodes[static_cast<size_t>(reader)], "ConvInteger") ||
          input_at(g.nodes[static_cast<size_t>(reader)], 2) != quantize->outputs[2])
        return false;
      dynamic = true;
    }
    if (reader < 0 || !foldable_conv(g.nodes[static_cast<size_t>(reader)], y)) return false;
    ir::Node& conv = g.nodes[static_cast<size_t>(reader)];
    if (!dynamic && (!padding_value(g, conv, &conv_value) || value != conv_value)) return false;
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
    if (quantize) {
      quantize->inputs[0] = pad.inputs[0];
      g.values[static_cast<size_t>(y)].type.has_shape = false;  // now the unpadded shape
      g.values[static_cast<size_t>(y)].type.shape.clear();
    } else {
      conv.inputs[0] = pad.inputs[0];
    }
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
