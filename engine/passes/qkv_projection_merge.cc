// qkv_projection_merge (level 2, after attention_fusion): the three projections that make a
// fused attention's Q, K and V from one input become one product whose output holds Q, K and V
// side by side, which the Attention reads packed (contract in
// engine/kernels/reference/attention.cc):
//   Q = FusedMatMul(A, Wq, bq?)  K = FusedMatMul(A, Wk, bk?)  V = FusedMatMul(A, Wv, bv?)
//   Y = Attention(Q, K, V, mask?)
// becomes
//   QKV = FusedMatMul(A, [Wq | Wk | Wv], [bq | bk | bv])   Y = Attention(QKV, "", "", mask?)
// The products may also be ONNX MatMuls by constant weights (no bias); the merged one is a
// FusedMatMul. Matched when the three products read the same A, have float32 constant weights of one shape
// and one trans_b ([K, N] joined along N, or [N, K] along the rows), constant [N] biases or
// none (a missing one becomes zeros when another is present), no residual, no activation and
// no other attribute, and Q, K and V are three different values read only by that Attention.
// Why: one product of N = 3*H*D keeps the multiply units busier than three of H*D and reads A
// once (fast mode rounds it to bf16 once instead of three times). BERT-base's projections,
// 128 x 768 x 768 each, in bf16 on one AMX core: 0.47 ms each, 0.75 ms for the merged one.
#include <cstring>

#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

// Node `p` is a FusedMatMul with constant float32 2-D weights, an optional constant [N] bias and
// nothing else, or an ONNX MatMul by such weights; its trans_b goes to *trans_b.
bool plain_projection(const ir::Graph& g, const ir::Node& p, int64_t* trans_b) {
  const bool onnx_matmul = is_op(p, "MatMul") && p.inputs.size() == 2;
  if (!onnx_matmul &&
      (p.domain != kOspreyDomain || p.op_type != "FusedMatMul" || input_at(p, 3) != ir::kNoValue ||
       !activation_of(p).empty()))
    return false;
  if (p.outputs.size() != 1) return false;
  for (const auto& [name, a] : p.attributes)
    if (name != "trans_b" || a.type != ir::Attribute::Type::kInt) return false;
  const ir::Attribute* t = p.find_attribute("trans_b");
  *trans_b = t ? t->i : 0;
  const Tensor* w = constant_tensor(g, input_at(p, 1));
  if (!w || w->dtype() != DType::kFloat32 || w->rank() != 2) return false;
  const int bias = input_at(p, 2);
  if (bias == ir::kNoValue) return true;
  const Tensor* b = constant_tensor(g, bias);
  return b && b->dtype() == DType::kFloat32 && b->rank() == 1 &&
         b->dim(0) == w->dim(*trans_b ? 0 : 1);
}

// The three weights joined along N: [K, 3N] (trans_b = 0) or [3N, K] (trans_b = 1).
Tensor joined_weights(const Tensor* w[3], bool trans_b) {
  const int64_t rows = w[0]->dim(0), cols = w[0]->dim(1);
  if (trans_b) {
    Tensor out(DType::kFloat32, {3 * rows, cols});
    for (int i = 0; i < 3; ++i)
      std::memcpy(out.data<float>() + i * rows * cols, w[i]->data<float>(), w[i]->nbytes());
    return out;
  }
  Tensor out(DType::kFloat32, {rows, 3 * cols});
  float* o = out.data<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int i = 0; i < 3; ++i)
      std::memcpy(o + (r * 3 + i) * cols, w[i]->data<float>() + r * cols,
                  static_cast<size_t>(cols) * sizeof(float));
  return out;
}

class QkvProjectionMerge final : public Pass {
 public:
  const char* name() const override { return "qkv_projection_merge"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    return rewrite_until_fixed_point(g, ctx.in_subgraph, [&](ir::Graph& gr, const GraphIndex& ix,
                                                             size_t i) {
      return merge(gr, ix, i, ctx.max_tensor_elements);
    });
  }

 private:
  static bool merge(ir::Graph& g, const GraphIndex& ix, size_t at, int64_t max_elements) {
    const ir::Node& att = g.nodes[at];
    if (att.domain != kOspreyDomain || att.op_type != "Attention") return false;
    int qkv[3], prod[3];
    int64_t trans_b[3];
    const Tensor* w[3];
    for (int i = 0; i < 3; ++i) {
      qkv[i] = input_at(att, static_cast<size_t>(i));
      if (qkv[i] == ir::kNoValue || ix.sole_reader(qkv[i]) != static_cast<int>(at)) return false;
      prod[i] = ix.producers[static_cast<size_t>(qkv[i])];
      if (prod[i] < 0 || !plain_projection(g, g.nodes[static_cast<size_t>(prod[i])], &trans_b[i]))
        return false;
      w[i] = constant_tensor(g, g.nodes[static_cast<size_t>(prod[i])].inputs[1]);
    }
    const ir::Node &pq = g.nodes[static_cast<size_t>(prod[0])],
                   &pk = g.nodes[static_cast<size_t>(prod[1])],
                   &pv = g.nodes[static_cast<size_t>(prod[2])];
    if (qkv[0] == qkv[1] || qkv[1] == qkv[2] || qkv[0] == qkv[2]) return false;
    if (pq.inputs[0] != pk.inputs[0] || pq.inputs[0] != pv.inputs[0]) return false;
    if (trans_b[0] != trans_b[1] || trans_b[0] != trans_b[2] || (trans_b[0] != 0 && trans_b[0] != 1))
      return false;
    if (w[0]->shape() != w[1]->shape() || w[0]->shape() != w[2]->shape()) return false;
    if (3 * w[0]->numel() > max_elements) return false;
    const bool tb = trans_b[0] == 1;
    const int64_t n = w[0]->dim(tb ? 0 : 1);
    const int weights = add_initializer(g, g.values[static_cast<size_t>(pq.inputs[1])].name + "_qkv",
                                        joined_weights(w, tb));
    int bias = ir::kNoValue;
    if (input_at(pq, 2) != ir::kNoValue || input_at(pk, 2) != ir::kNoValue ||
        input_at(pv, 2) != ir::kNoValue) {
      Tensor b(DType::kFloat32, {3 * n});
      std::memset(b.raw_data(), 0, b.nbytes());
      for (int i = 0; i < 3; ++i)
        if (const int c = input_at(g.nodes[static_cast<size_t>(prod[i])], 2); c != ir::kNoValue)
          std::memcpy(b.data<float>() + i * n, constant_tensor(g, c)->data<float>(),
                      static_cast<size_t>(n) * sizeof(float));
      bias = add_initializer(g, g.values[static_cast<size_t>(qkv[0])].name + "_qkv_bias",
                             std::move(b));
    }
    const int packed =
        add_unique_value(g, g.values[static_cast<size_t>(qkv[0])].name + "_qkv", float_tensor_type());
    ir::Node& merged = g.nodes[static_cast<size_t>(prod[0])];
    merged.domain = kOspreyDomain;  // an ONNX MatMul becomes the FusedMatMul that takes the bias
    merged.op_type = "FusedMatMul";
    if (merged.inputs.size() < 3) merged.inputs.resize(3, ir::kNoValue);
    merged.inputs[1] = weights;
    merged.inputs[2] = bias;
    merged.outputs[0] = packed;
    ir::Node& a = g.nodes[at];
    a.inputs[0] = packed;
    a.inputs[1] = a.inputs[2] = ir::kNoValue;
    std::vector<bool> dead(g.nodes.size(), false);
    dead[static_cast<size_t>(prod[1])] = dead[static_cast<size_t>(prod[2])] = true;
    erase_nodes(g, dead);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_qkv_projection_merge() {
  return std::make_unique<QkvProjectionMerge>();
}

}  // namespace osprey::passes
