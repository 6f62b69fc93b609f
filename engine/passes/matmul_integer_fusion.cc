// matmul_integer_fusion (level 2): the product of a dynamically quantized model (onnxruntime's
// quantize_dynamic),
//   MatMulInteger(A, B, a_zero_point, b_zero_point) -> Cast(to float) -> Mul(scale) [-> Add(bias)]
//   [-> Relu | com.osprey Gelu]
// becomes one com.osprey MatMulIntegerToFloat(A, B, a_zero_point, b_zero_point, scale, bias)
// with that activation: the int8 product writes float32 with the scale, the bias and the
// activation applied inside it, instead of an int32 tensor and three or four passes over it (a
// fifth of a quantized MiniLM's time, and its Gelus). The reference computes the same
// operations in the same order (engine/kernels/reference/gemm.cc). It runs after gelu_fusion,
// so that the transformer's decomposed GELU is one node by then.
// What matches: B of rank 2 with a known column count N; a float32 scale of one value or of
// shape [N] (the model computes it at run time from A's dynamic scale and B's constant one); a
// constant float32 bias of shape [N]; the Cast's and the Mul's outputs read by nothing else (the
// Add's too, when it is fused). Everything else stays as it is.
// The same chain after a ConvInteger (a dynamically quantized CNN) becomes com.osprey
// ConvIntegerToFloat(x, w, x_zero_point, w_zero_point, scale, bias) with the convolution's
// attributes: a constant 4-D w with M output channels, a scale of one value, a constant bias of
// M values along the channel axis ([1, M, 1, 1] or [M, 1, 1], stored [M]), and Relu or Clip
// (constant bounds) as the activation (reference: conv.cc).
// Last, a MatMulIntegerToFloat (made here, or by qoperator_rewrite) whose float result only a
// per-tensor QuantizeLinear reads (constant scale and zero point) takes that quantization in as
// y_scale and y_zero_point (inputs 6, 7) and writes the bytes: the QDQ transformer's
// product -> QuantizeLinear, the QOperator products' quantized outputs.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

struct Match {
  int cast = -1, mul = -1, add = -1;
  int scale = ir::kNoValue, bias = ir::kNoValue, output = ir::kNoValue;
  ActivationMatch act;  // name "" when none
  Tensor conv_bias;     // a convolution's bias as [M] (undefined: the bias value as it is)
};

// A convolution's constant float32 bias along the channel axis of an [N, M, spatial...] output:
// [1, M, 1, 1] or [M, 1, 1] (rank 4 output), as a tensor [M]; undefined otherwise.
Tensor channel_bias(const Tensor* t, int64_t m) {
  if (!t || t->dtype() != DType::kFloat32 || t->numel() != m || t->rank() < 3 || t->rank() > 4 ||
      t->dim(t->rank() - 3) != m)
    return Tensor();
  Tensor b(DType::kFloat32, {m});
  std::copy(t->data<float>(), t->data<float>() + m, b.data<float>());
  return b;
}

// B's column count when its shape is known, rank 2 and its last dim fixed; else -1.
int64_t columns(const ir::Graph& g, const GraphIndex& ix, int b) {
  if (const Tensor* t = constant_tensor(g, b)) return t->rank() == 2 ? t->dim(1) : -1;
  std::vector<int64_t> dims;
  if (!ix.facts.fixed_shape(b, &dims) || dims.size() != 2) return -1;
  return dims[1];
}

// A float32 value of one element (rank 0 or 1) or of shape [n].
bool scale_shape(const GraphIndex& ix, int v, int64_t n) {
  std::vector<int64_t> dims;
  if (ix.dtype(v) != DType::kFloat32 || !ix.facts.fixed_shape(v, &dims)) return false;
  return (dims.size() <= 1 && shape_numel(dims) == 1) || dims == std::vector<int64_t>{n};
}

bool match(const ir::Graph& g, const GraphIndex& ix, const ir::Node& mm, Match* m) {
  const bool conv = is_op(mm, "ConvInteger");
  if ((!conv && !is_op(mm, "MatMulInteger")) || mm.inputs.size() < 2 || mm.outputs.size() != 1 || mm.outputs[0] < 0)
    return false;
  const Tensor* w = conv ? constant_tensor(g, mm.inputs[1]) : nullptr;
  if (conv && (!w || w->rank() != 4)) return false;
  const int64_t n = conv ? w->dim(0) : columns(g, ix, mm.inputs[1]);
  if (n < 1) return false;
  m->cast = ix.sole_reader(mm.outputs[0]);
  if (m->cast < 0) return false;
  const ir::Node& cast = g.nodes[static_cast<size_t>(m->cast)];
  const auto* to = cast.find_attribute("to");
  if (!is_op(cast, "Cast") || !to || to->type != ir::Attribute::Type::kInt ||
      to->i != static_cast<int64_t>(DType::kFloat32) || cast.outputs.size() != 1 || cast.outputs[0] < 0)
    return false;
  m->mul = sole_binary_reader(g, ix, cast.outputs[0], "Mul");
  if (m->mul < 0) return false;
  const ir::Node& mul = g.nodes[static_cast<size_t>(m->mul)];
  m->scale = mul.inputs[0] == cast.outputs[0] ? mul.inputs[1] : mul.inputs[0];
  if (m->scale == cast.outputs[0] || !scale_shape(ix, m->scale, conv ? 1 : n)) return false;
  m->output = mul.outputs[0];
  const int add = sole_binary_reader(g, ix, m->output, "Add");
  if (add >= 0) {
    const ir::Node& a = g.nodes[static_cast<size_t>(add)];
    const int bias = a.inputs[0] == m->output ? a.inputs[1] : a.inputs[0];
    const Tensor* t = constant_tensor(g, bias);
    if (conv) m->conv_bias = bias != m->output ? channel_bias(t, n) : Tensor();
    if (bias != m->output && (conv ? m->conv_bias.defined() : t && t->dtype() == DType::kFloat32 && t->shape() == Shape{n})) {
      m->add = add;
      m->bias = bias;
      m->output = a.outputs[0];
    }
  }
  ActivationMatch am;
  if (match_activation(g, ix, m->output, &am) &&
      (conv ? (am.name == "Relu" && am.params.empty()) || (am.name == "Clip" && am.params.size() == 2)
            : am.params.empty() && (am.name == "Relu" || am.name == "Gelu" || am.name == "GeluTanh"))) {
    m->act = am;
    m->output = am.output;
  }
  return true;
}

class MatMulIntegerFusion final : public Pass {
 public:
  const char* name() const override { return "matmul_integer_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Match m;
      if (dead[i] || !match(g, ix, g.nodes[i], &m)) continue;
      std::vector<int> nodes = {static_cast<int>(i), m.cast, m.mul};
      if (m.add >= 0) nodes.push_back(m.add);
      nodes.insert(nodes.end(), m.act.nodes.begin(), m.act.nodes.end());
      if (!claim_match(nodes, static_cast<int>(i), &dead)) continue;
      const bool conv = is_op(g.nodes[i], "ConvInteger");
      int bias = m.bias;
      if (conv && bias != ir::kNoValue)
        bias = add_initializer(g, g.values[static_cast<size_t>(m.output)].name + "_bias", m.conv_bias);
      ir::Node& f = g.nodes[i];
      make_fused(f, conv ? "ConvIntegerToFloat" : "MatMulIntegerToFloat", bias != ir::kNoValue ? 6 : 5);
      f.inputs[4] = m.scale;
      if (bias != ir::kNoValue) f.inputs[5] = bias;
      f.outputs = {m.output};
      if (!conv) f.attributes.clear();  // (a convolution keeps its window attributes)
      if (!m.act.name.empty()) set_activation(f, m.act);
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return fold_quantizations(g, ctx) || changed;
  }

 private:
  static bool fold_quantizations(ir::Graph& g, const PassContext& ctx) {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (n.domain != kOspreyDomain || n.op_type != "MatMulIntegerToFloat" || n.inputs.size() > 6 ||
          n.outputs.size() != 1 || n.outputs[0] < 0)
        continue;
      const int q = ix.sole_reader(n.outputs[0]);
      if (q < 0 || dead[static_cast<size_t>(q)]) continue;
      const ir::Node& quant = g.nodes[static_cast<size_t>(q)];
      if (!is_op(quant, "QuantizeLinear") || !per_tensor_quantization(g, quant) || quant.inputs[0] != n.outputs[0])
        continue;
      int zp = input_at(quant, 2);
      if (zp == ir::kNoValue)
        zp = add_initializer(g, g.values[static_cast<size_t>(quant.outputs[0])].name + "_zero_point",
                             Tensor::from_vector(std::vector<uint8_t>{0}).reshaped({}));
      n.inputs.resize(8, ir::kNoValue);
      n.inputs[6] = quant.inputs[1];
      n.inputs[7] = zp;
      n.outputs = {quant.outputs[0]};
      n.kernel = nullptr;
      dead[static_cast<size_t>(q)] = true;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_integer_fusion() {
  return std::make_unique<MatMulIntegerFusion>();
}

}  // namespace osprey::passes
