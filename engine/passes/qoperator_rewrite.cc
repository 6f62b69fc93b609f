// qoperator_rewrite (level 2): a model quantized in the QOperator format (onnxruntime's
// quantize_static with QuantFormat.QOperator, and the int8 models that zoos publish) onto the
// int8 ops the QDQ path already runs fast:
// - ONNX QLinearConv -> com.osprey QLinearConv (oneDNN's int8 convolution, channels-last
//   region), its int32 bias kept: the fused op then computes ONNX's arithmetic, (acc + B[m]) *
//   (x_scale * w_scale[m] / y_scale), which is also the primitive's. 2-D (4-D weights),
//   constant x_scale (one value) and w_scale, constant int32 bias [M] or none.
// - com.microsoft QLinearAdd with both inputs of one known shape -> com.osprey QLinearAdd (the
//   same computation; the channels-last region takes it).
// - com.microsoft QGemm with constant a_scale, a_zero_point, int8 B, b_scale, b_zero_point
//   (one value or one per column) and C -> com.osprey MatMulIntegerToFloat (B stored [K, N]; scale alpha * a_scale *
//   b_scale[n]; bias C[n] * a_scale * b_scale[n]), followed by QuantizeLinear(y_scale,
//   y_zero_point) when the QGemm's output is quantized: oneDNN's int8 matmul instead of the
//   reference's loops, the same value up to float rounding. A of rank 2, not transposed; C of
//   shape [N] (or none).
// - ONNX QLinearMatMul with a constant 2-D B -> com.osprey MatMulIntegerToFloat ->
//   QuantizeLinear, bit for bit the reference (rewrite_matmul says how). One with a computed B
//   (attention) keeps its CPU kernel (float GEMM on exact integer sums, kernels/cpu).
// Others stay on the reference kernels.
#include "passes/fusion_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace osprey::passes {
namespace {

bool is_ms(const ir::Node& n, const char* op) { return n.domain == "com.microsoft" && n.op_type == op; }

// ONNX QLinearConv -> com.osprey QLinearConv.
bool rewrite_conv(ir::Graph& g, ir::Node& n) {
  if (!is_op(n, "QLinearConv") || n.inputs.size() < 8 || n.outputs.empty()) return false;
  const Tensor* xs = constant_tensor(g, n.inputs[1]);
  const Tensor* w = constant_tensor(g, n.inputs[3]);
  const Tensor* ws = constant_tensor(g, n.inputs[4]);
  if (!xs || !w || !ws || w->rank() != 4 || xs->dtype() != DType::kFloat32 || xs->numel() != 1 ||
      ws->dtype() != DType::kFloat32 || (ws->numel() != 1 && ws->numel() != w->dim(0)))
    return false;
  const int b = input_at(n, 8);
  if (b != ir::kNoValue) {
    const Tensor* bt = constant_tensor(g, b);
    if (!bt || bt->dtype() != DType::kInt32 || bt->shape() != Shape{w->dim(0)}) return false;
  }
  if (input_at(n, 7) == ir::kNoValue) {
    const std::string base = g.values[static_cast<size_t>(n.outputs[0])].name;
    n.inputs.resize(std::max<size_t>(n.inputs.size(), 8));
    n.inputs[7] = add_initializer(g, base + "_y_zero_point", Tensor::from_vector(std::vector<uint8_t>{0}));
  }
  make_fused(n, "QLinearConv", n.inputs.size());
  return true;
}

// com.microsoft QLinearAdd of one shape -> com.osprey QLinearAdd.
bool rewrite_add(const GraphIndex& ix, ir::Node& n) {
  if (!is_ms(n, "QLinearAdd") || n.inputs.size() != 8) return false;
  for (int v : n.inputs)  // ours takes all eight
    if (v < 0) return false;
  if (!ix.facts.has_shape[static_cast<size_t>(n.inputs[0])] || !ix.facts.same_shape(n.inputs[0], n.inputs[3]))
    return false;
  make_fused(n, "QLinearAdd", 8);
  return true;
}

// com.microsoft QGemm -> com.osprey MatMulIntegerToFloat [-> QuantizeLinear].
bool rewrite_gemm(ir::Graph& g, const GraphIndex& ix, size_t i, std::vector<ir::Node>* added) {
  ir::Node& n = g.nodes[i];
  if (!is_ms(n, "QGemm") || n.inputs.size() < 6 || n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs[0] < 0)
    return false;
  const auto* ta = n.find_attribute("transA");
  if (ta && ta->i != 0) return false;
  const auto* tb_attr = n.find_attribute("transB");
  const bool tb = tb_attr && tb_attr->i != 0;
  const auto* alpha_attr = n.find_attribute("alpha");
  const float alpha = alpha_attr ? alpha_attr->f : 1.0f;
  const Tensor* as = constant_tensor(g, n.inputs[1]);
  const Tensor* b = constant_tensor(g, n.inputs[3]);
  const Tensor* bs = constant_tensor(g, n.inputs[4]);
  const Tensor* bz = constant_tensor(g, n.inputs[5]);
  if (!as || !b || !bs || !bz || as->dtype() != DType::kFloat32 || as->numel() != 1 || b->rank() != 2 ||
      b->dtype() != DType::kInt8 || bs->dtype() != DType::kFloat32 || bz->dtype() != DType::kInt8)
    return false;
  const int a_zp = input_at(n, 2);
  if (a_zp != ir::kNoValue && !constant_tensor(g, a_zp)) return false;
  const auto a = static_cast<size_t>(n.inputs[0]);
  if (!ix.facts.has_shape[a] || ix.facts.shapes[a].size() != 2) return false;
  const int64_t K = tb ? b->dim(1) : b->dim(0), N = tb ? b->dim(0) : b->dim(1);
  if ((bs->numel() != 1 && bs->numel() != N) || (bz->numel() != 1 && (bz->rank() != 1 || bz->numel() != N))) return false;
  const int c = input_at(n, 6);
  const Tensor* ct = c == ir::kNoValue ? nullptr : constant_tensor(g, c);
  if (c != ir::kNoValue &&
      (!ct || ct->dtype() != DType::kInt32 || ct->rank() < 1 || ct->numel() != N || ct->dim(ct->rank() - 1) != N))
    return false;
  // B as [K, N].
  Tensor bk(DType::kInt8, {K, N});
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bk.data<int8_t>()[k * N + j] = b->data<int8_t>()[tb ? j * K + k : k * N + j];
  std::vector<float> scale, bias;
  for (int64_t j = 0; j < (bs->numel() > 1 ? N : 1); ++j) {
    const float s = as->data<float>()[0] * bs->data<float>()[j];
    scale.push_back(alpha * s);
  }
  if (ct)
    for (int64_t j = 0; j < N; ++j)
      bias.push_back(static_cast<float>(ct->data<int32_t>()[j]) *
                     (as->data<float>()[0] * bs->data<float>()[bs->numel() > 1 ? j : 0]));
  const std::string base = g.values[static_cast<size_t>(n.outputs[0])].name;
  const int y_scale = input_at(n, 7), y_zp = input_at(n, 8);
  const int out = n.outputs[0];
  std::vector<int> inputs = {n.inputs[0], add_initializer(g, base + "_weights", bk), a_zp, n.inputs[5],
                             add_initializer(g, base + "_scale", Tensor::from_vector(scale))};
  if (!bias.empty()) inputs.push_back(add_initializer(g, base + "_bias", Tensor::from_vector(bias)));
  ir::Node& m = g.nodes[i];
  make_fused(m, "MatMulIntegerToFloat", inputs.size());
  m.inputs = inputs;
  m.attributes.clear();
  if (y_scale != ir::kNoValue) {  // quantize the float product
    const int f = add_unique_value(g, base + "_float", float_tensor_type());
    m.outputs = {f};
    ir::Node q;
    q.op_type = "QuantizeLinear";
    q.opset = 13;
    q.name = m.name + "_quantize";
    q.inputs = {f, y_scale};
    if (y_zp != ir::kNoValue) q.inputs.push_back(y_zp);
    q.outputs = {out};
    added->push_back(std::move(q));
  }
  return true;
}

// ONNX QLinearMatMul with a constant 2-D B -> com.osprey MatMulIntegerToFloat (scale a_scale *
// b_scale[n] / y_scale, in the reference's order) -> QuantizeLinear(1, y_zero_point): the
// reference's y = round(float(acc) * scale) + y_zero_point, bit for bit. Constant one-value
// a_scale, a_zero_point and y_scale; b_scale and b_zero_point one value or one per column.
bool rewrite_matmul(ir::Graph& g, size_t i, std::vector<ir::Node>* added) {
  ir::Node& n = g.nodes[i];
  if (!is_op(n, "QLinearMatMul") || n.inputs.size() != 8 || n.outputs.size() != 1 || n.outputs[0] < 0) return false;
  for (int v : n.inputs)
    if (v < 0) return false;
  const Tensor* as = constant_tensor(g, n.inputs[1]);
  const Tensor* az = constant_tensor(g, n.inputs[2]);
  const Tensor* b = constant_tensor(g, n.inputs[3]);
  const Tensor* bs = constant_tensor(g, n.inputs[4]);
  const Tensor* bz = constant_tensor(g, n.inputs[5]);
  const Tensor* ys = constant_tensor(g, n.inputs[6]);
  auto one_float = [](const Tensor* t) { return t && t->dtype() == DType::kFloat32 && t->numel() == 1 && t->rank() <= 1; };
  if (!one_float(as) || !one_float(ys) || !az || az->numel() != 1 || !b || b->rank() != 2 || !bs || !bz ||
      bs->dtype() != DType::kFloat32 || bz->dtype() != b->dtype())
    return false;
  const int64_t N = b->dim(1);
  if ((bs->numel() != 1 && (bs->rank() != 1 || bs->numel() != N)) || (bz->numel() != 1 && (bz->rank() != 1 || bz->numel() != N)))
    return false;
  std::vector<float> scale;
  for (int64_t j = 0; j < bs->numel(); ++j)
    scale.push_back(as->data<float>()[0] * bs->data<float>()[j] / ys->data<float>()[0]);
  const std::string base = g.values[static_cast<size_t>(n.outputs[0])].name;
  const int out = n.outputs[0], y_zp = n.inputs[7];  // (`n` is not used past make_fused)
  const std::vector<int> inputs = {n.inputs[0], n.inputs[3], n.inputs[2], n.inputs[5],
                                   add_initializer(g, base + "_scale", Tensor::from_vector(scale))};
  // The unit scale of the rank of the zero point (the CPU kernel takes a pair of one rank).
  const Tensor* yz = constant_tensor(g, y_zp);
  Tensor unit(DType::kFloat32, yz && yz->rank() == 1 ? Shape{1} : Shape{});
  unit.data<float>()[0] = 1.0f;
  const int one = add_initializer(g, base + "_unit_scale", unit);
  const int f = add_unique_value(g, base + "_scaled", float_tensor_type());
  ir::Node& m = g.nodes[i];
  make_fused(m, "MatMulIntegerToFloat", inputs.size());
  m.inputs = inputs;
  m.attributes.clear();
  m.outputs = {f};
  ir::Node q;
  q.op_type = "QuantizeLinear";
  q.opset = 13;
  q.name = m.name + "_quantize";
  q.inputs = {f, one, y_zp};
  q.outputs = {out};
  added->push_back(std::move(q));
  return true;
}

class QOperatorRewrite final : public Pass {
 public:
  const char* name() const override { return "qoperator_rewrite"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    bool changed = false;
    std::vector<ir::Node> added;
    const size_t count = g.nodes.size();
    for (size_t i = 0; i < count; ++i) {
      if (rewrite_conv(g, g.nodes[i]) || rewrite_add(ix, g.nodes[i]) || rewrite_gemm(g, ix, i, &added) ||
          rewrite_matmul(g, i, &added))
        changed = true;
    }
    for (auto& n : added) g.nodes.push_back(std::move(n));
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_qoperator_rewrite() {
  return std::make_unique<QOperatorRewrite>();
}

}  // namespace osprey::passes
