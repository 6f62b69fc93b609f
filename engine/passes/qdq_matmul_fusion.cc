// qdq_matmul_fusion (level 2, before constant folding): a linear layer of a model quantized in
// the QDQ format (quantize_static of a transformer),
//   x_q -> DequantizeLinear -> MatMul(., DequantizeLinear(w_q))
// becomes the int8 product a dynamically quantized model writes,
//   MatMulInteger(x_q, w_q, x_zp, w_zp) -> Cast(float) -> Mul(x_scale * w_scale)
// which matmul_integer_fusion then runs as one com.osprey MatMulIntegerToFloat on oneDNN's int8
// matmul, with the bias Add and the activation after it. The QDQ graph sums float products of
// dequantized values; this sums the integers exactly and scales once, so a result may differ
// by float rounding (and a later quantization by one step). It must run before constant
// folding, which would turn DequantizeLinear(w_q) into float weights. Only where oneDNN's int8
// kernels have VNNI (qdq_int8_fusions_allowed(); elsewhere the reference's integer GEMM would
// be slower than the float MatMul).
// What matches: x's quantization per tensor (one constant scale and zero point); constant int8
// weights of rank 2 [K, N] with a scale of one value or one per column (axis 1) and a zero
// point absent or constant; no opset-21 attributes (block_size, output_dtype). The
// DequantizeLinear nodes stay when something else reads them.
// A QDQ Gemm (a quantized CNN's classifier head: Gemm(DequantizeLinear(x_q),
// DequantizeLinear(w_q) [, C]) with alpha = beta = 1, transA = 0) likewise, its weights stored
// [K, N] (transposed once when transB = 1, their per-channel scales then along axis 0) and C
// added after the scaling by an Add (matmul_integer_fusion takes it as the bias when it is a
// constant [N], as DequantizeLinear of the int32 bias folds to).
#include "passes/fusion_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

struct Match {
  const ir::Node* x_dq = nullptr;
  const ir::Node* w_dq = nullptr;
  std::vector<float> scale;  // x_scale * w_scale[n]: one value, or N
  bool trans_b = false;      // a Gemm's weights stored [N, K]
  int c = ir::kNoValue;      // a Gemm's C
};

// A Gemm the int8 product computes: 2-D, alpha = beta = 1, transA = 0 (transB either).
bool plain_gemm(const ir::Node& n, bool* trans_b) {
  if (!is_op(n, "Gemm") || n.inputs.size() < 2 || n.inputs.size() > 3) return false;
  auto float_attr = [&](const char* name) {
    const auto* a = n.find_attribute(name);
    return a ? a->f : 1.0f;
  };
  const auto* ta = n.find_attribute("transA");
  const auto* tb = n.find_attribute("transB");
  *trans_b = tb && tb->i != 0;
  return (!ta || ta->i == 0) && float_attr("alpha") == 1.0f && float_attr("beta") == 1.0f;
}

bool match(const ir::Graph& g, const GraphIndex& ix, const ir::Node& mm, Match* m) {
  const bool gemm = plain_gemm(mm, &m->trans_b);
  if ((!gemm && (!is_op(mm, "MatMul") || mm.inputs.size() != 2)) || mm.outputs.size() != 1 || mm.outputs[0] < 0)
    return false;
  if (gemm) m->c = input_at(mm, 2);
  m->x_dq = producer_op(g, ix, mm.inputs[0], "DequantizeLinear");
  m->w_dq = producer_op(g, ix, mm.inputs[1], "DequantizeLinear");
  if (!m->x_dq || !m->w_dq || !per_tensor_quantization(g, *m->x_dq)) return false;
  const ir::Node& wdq = *m->w_dq;
  if (wdq.inputs.size() < 2 || wdq.find_attribute("block_size") || wdq.find_attribute("output_dtype")) return false;
  const Tensor* w = constant_tensor(g, wdq.inputs[0]);
  const Tensor* ws = constant_tensor(g, wdq.inputs[1]);
  if (!w || !ws || w->dtype() != DType::kInt8 || w->rank() != 2 || ws->dtype() != DType::kFloat32) return false;
  const int64_t n = w->dim(m->trans_b ? 0 : 1);
  if (ws->numel() != 1) {  // per column of the product: axis 1 of [K, N], axis 0 of [N, K]
    const auto* axis = wdq.find_attribute("axis");
    const int64_t a = axis ? axis->i : 1;
    const bool along_n = m->trans_b ? (a == 0 || a == -2) : (a == 1 || a == -1);
    if (ws->rank() != 1 || ws->numel() != n || !along_n) return false;
  }
  const int wz = input_at(wdq, 2);
  if (wz != ir::kNoValue) {
    const Tensor* z = constant_tensor(g, wz);
    if (!z || z->dtype() != DType::kInt8 || z->numel() != ws->numel()) return false;
  }
  const float xs = constant_tensor(g, m->x_dq->inputs[1])->data<float>()[0];
  for (int64_t j = 0; j < ws->numel(); ++j) m->scale.push_back(xs * ws->data<float>()[j]);
  return true;
}

class QdqMatMulFusion final : public Pass {
 public:
  const char* name() const override { return "qdq_matmul_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    if (!qdq_int8_fusions_allowed()) return false;
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<ir::Node> added;
    const size_t count = g.nodes.size();
    for (size_t i = 0; i < count; ++i) {
      Match m;
      if (!match(g, ix, g.nodes[i], &m)) continue;
      const ir::Node xdq = *m.x_dq, wdq = *m.w_dq;
      const int out = g.nodes[i].outputs[0];
      const std::string base = g.values[static_cast<size_t>(out)].name;
      const int acc = add_unique_value(g, base + "_int32", tensor_type(DType::kInt32));
      const int accf = add_unique_value(g, base + "_int32_float", float_tensor_type());
      Tensor scale = Tensor::from_vector(m.scale);
      if (m.scale.size() == 1) scale = scale.reshaped({});
      const int scale_value = add_initializer(g, base + "_scale", scale);
      int w = wdq.inputs[0];
      if (m.trans_b) {  // the weights as [K, N], once
        const Tensor& nk = *constant_tensor(g, w);
        const int64_t rows = nk.dim(0), cols = nk.dim(1);
        Tensor kn(DType::kInt8, {cols, rows});
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t k = 0; k < cols; ++k) kn.data<int8_t>()[k * rows + r] = nk.data<int8_t>()[r * cols + k];
        w = add_initializer(g, g.values[static_cast<size_t>(w)].name + "_kn", kn);
      }
      const int scaled = m.c == ir::kNoValue ? out : add_unique_value(g, base + "_scaled", float_tensor_type());
      ir::Node& n = g.nodes[i];
      n.op_type = "MatMulInteger";
      n.opset = std::max(n.opset, 10);
      n.kernel = nullptr;
      n.attributes.clear();
      n.inputs = {xdq.inputs[0], w, input_at(xdq, 2), input_at(wdq, 2)};
      n.outputs = {acc};
      ir::Node cast;
      cast.op_type = "Cast";
      cast.opset = n.opset;
      cast.name = n.name + "_to_float";
      cast.inputs = {acc};
      cast.outputs = {accf};
      cast.attributes["to"] = int_attribute(static_cast<int64_t>(DType::kFloat32));
      ir::Node mul;
      mul.op_type = "Mul";
      mul.opset = n.opset;
      mul.name = n.name + "_scale";
      mul.inputs = {accf, scale_value};
      mul.outputs = {scaled};
      added.push_back(std::move(cast));
      added.push_back(std::move(mul));
      if (m.c != ir::kNoValue) {  // Gemm's C, after the scaling
        ir::Node add;
        add.op_type = "Add";
        add.opset = n.opset;
        add.name = n.name + "_c";
        add.inputs = {scaled, m.c};
        add.outputs = {out};
        added.push_back(std::move(add));
      }
    }
    if (added.empty()) return false;
    for (auto& n : added) g.nodes.push_back(std::move(n));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_qdq_matmul_fusion() {
  return std::make_unique<QdqMatMulFusion>();
}

}  // namespace osprey::passes
