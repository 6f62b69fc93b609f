// qdq_conv_fusion (level 2, before constant folding, and again after it): a convolution of a model quantized in
// the QDQ format (onnxruntime's quantize_static and the like),
//   x_q -> DequantizeLinear -> Conv(W = DequantizeLinear(w_q), B) [-> Relu | Clip]
//       -> QuantizeLinear -> y_q,
// becomes one com.osprey QLinearConv(x_q, x_scale, x_zp, w_q, w_scale, w_zp, y_scale, y_zp, B)
// that computes the same in int8 (engine/kernels/reference/conv.cc defines it; the CPU kernel
// runs it on oneDNN's int8 convolutions), with the activation as its attribute. It must run
// before constant folding, which would turn DequantizeLinear(w_q) into float weights. Only
// where oneDNN's int8 kernels have VNNI (cpu::int8_vnni_available()).
// What matches: 2-D convolutions (4-D int8 weights); x's and y's scale and zero point one
// constant value each (uint8 or int8); the weights' scale one value or one per output channel
// (axis 0), their zero point absent or constant; B absent, a float32 constant, or
// DequantizeLinear of an int32 constant (turned into float32 here, as that node computes
// it); the Conv's output (and the activation's) read by nothing else; auto_pad NOTSET. A zero
// Pad between two quantizations with x's parameters (x_q -> DequantizeLinear -> Pad ->
// QuantizeLinear -> DequantizeLinear, EfficientNet-Lite's static "same" padding) folds into
// the pads (on the second run, when the Pad's pads are computed by a shape subgraph that
// constant folding had to compute first). The nodes before X stay when something else reads them (dead code elimination
// removes them otherwise).
#include <atomic>

#include "kernels/cpu/cpu_capabilities.h"
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

std::atomic<bool> g_forced{false};

bool is_byte_type(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

bool no_later_opset_attrs(const ir::Node& n) {
  return !n.find_attribute("block_size") && !n.find_attribute("output_dtype") &&
         !n.find_attribute("saturate");
}


// A per-tensor quantization's scale and zero point (no zero point: uint8 0).
struct QParams {
  float scale = 0;
  DType type = DType::kUInt8;
  int64_t zero_point = 0;
  bool operator==(const QParams& o) const {
    return scale == o.scale && type == o.type && zero_point == o.zero_point;
  }
};

// The parameters of a per_tensor_quantization() node (inputs 1 and 2), or of a fused node's slots.
QParams qparams(const ir::Graph& g, int scale, int zero_point) {
  QParams p;
  p.scale = constant_tensor(g, scale)->data<float>()[0];
  if (zero_point != ir::kNoValue) {
    const Tensor* t = constant_tensor(g, zero_point);
    p.type = t->dtype();
    p.zero_point = t->get_as_int64(0);
  }
  return p;
}

// Looks through x = QuantizeLinear(Pad(DequantizeLinear(a))) where both quantizations have
// parameters `p` and the Pad zero-pads the spatial dims: then a padded zero quantizes to the
// zero point, which a QLinearConv's padding stands for, and Q(DQ(a)) is a. Sets *x to a and
// adds the Pad's pads to `pads` ([top, left, bottom, right]); false when the chain is not there.
bool look_through_pad(const ir::Graph& g, const GraphIndex& ix, const QParams& p, int* x,
                      std::vector<int64_t>* pads) {
  const ir::Node* q = producer_op(g, ix, *x, "QuantizeLinear");
  if (!q || !per_tensor_quantization(g, *q) || !(qparams(g, q->inputs[1], input_at(*q, 2)) == p)) return false;
  const ir::Node* pad = producer_op(g, ix, q->inputs[0], "Pad");
  std::vector<int64_t> pp;
  if (!pad || !zero_padding(g, *pad, &pp) || pp.size() != 8) return false;
  const ir::Node* dq = producer_op(g, ix, pad->inputs[0], "DequantizeLinear");
  if (!dq || !per_tensor_quantization(g, *dq) || !(qparams(g, dq->inputs[1], input_at(*dq, 2)) == p)) return false;
  *x = dq->inputs[0];
  for (size_t i = 0; i < 2; ++i) {
    (*pads)[i] += pp[2 + i];
    (*pads)[2 + i] += pp[6 + i];
  }
  return true;
}

// Pads of a conv-like node ([top, left, bottom, right]), or false (auto_pad, a bad length).
bool conv_pads(const ir::Node& n, std::vector<int64_t>* pads) {
  if (const auto* a = n.find_attribute("auto_pad"); a && a->s != "NOTSET" && !a->s.empty()) return false;
  pads->assign(4, 0);
  if (const auto* a = n.find_attribute("pads")) {
    if (a->type != ir::Attribute::Type::kInts || a->ints.size() != 4) return false;
    *pads = a->ints;
  }
  return true;
}

struct Match {
  int x = ir::kNoValue;       // the quantized X the fused node reads
  std::vector<int64_t> pads;  // the convolution's pads, with a folded Pad's
  int x_dq = -1, w_dq = -1, act = -1, q = -1;
  std::vector<float> bias;  // empty: none
  bool has_bias = false;
  int bias_value = ir::kNoValue;  // a float32 constant used as it is
};

bool match(const ir::Graph& g, const GraphIndex& ix, int ci, Match* m) {
  const ir::Node& conv = g.nodes[static_cast<size_t>(ci)];
  if (!is_op(conv, "Conv") || conv.inputs.size() < 2 || conv.inputs.size() > 3 ||
      conv.outputs.size() != 1 || conv.outputs[0] < 0)
    return false;
  const ir::Node* xdq = producer_op(g, ix, conv.inputs[0], "DequantizeLinear");
  const ir::Node* wdq = producer_op(g, ix, conv.inputs[1], "DequantizeLinear");
  if (!xdq || !wdq || !per_tensor_quantization(g, *xdq)) return false;
  const DType xt = ix.dtype(xdq->inputs[0]);
  if (!is_byte_type(xt)) return false;
  if (!conv_pads(conv, &m->pads)) return false;
  m->x = xdq->inputs[0];
  look_through_pad(g, ix, qparams(g, xdq->inputs[1], input_at(*xdq, 2)), &m->x, &m->pads);
  // Weights: a 4-D int8 constant, scale one value or [M] along axis 0, zero point constant.
  const Tensor* wq = constant_tensor(g, wdq->inputs[0]);
  if (!wq || wq->dtype() != DType::kInt8 || wq->rank() != 4 || wdq->inputs.size() < 2 ||
      wdq->outputs.size() != 1 || !no_later_opset_attrs(*wdq))
    return false;
  const int64_t M = wq->dim(0);
  const Tensor* ws = constant_tensor(g, wdq->inputs[1]);
  if (!ws || ws->dtype() != DType::kFloat32) return false;
  if (ws->numel() != 1 || ws->rank() > 1) {
    const ir::Attribute* axis = wdq->find_attribute("axis");
    const int64_t a = axis && axis->type == ir::Attribute::Type::kInt ? axis->i : 1;
    if (ws->rank() != 1 || ws->numel() != M || (a != 0 && a != -4)) return false;
  }
  if (const int wz = input_at(*wdq, 2); wz != ir::kNoValue) {
    const Tensor* z = constant_tensor(g, wz);
    if (!z || z->dtype() != DType::kInt8 || z->numel() != ws->numel()) return false;
  }
  // Bias.
  if (const int b = input_at(conv, 2); b != ir::kNoValue) {
    m->has_bias = true;
    if (const Tensor* bt = constant_tensor(g, b)) {
      if (bt->dtype() != DType::kFloat32 || bt->rank() != 1 || bt->numel() != M) return false;
      m->bias_value = b;
    } else if (const ir::Node* bdq = producer_op(g, ix, b, "DequantizeLinear")) {
      const Tensor* bq = constant_tensor(g, bdq->inputs[0]);
      const Tensor* bs = bdq->inputs.size() > 1 ? constant_tensor(g, bdq->inputs[1]) : nullptr;
      if (!bq || !bs || bq->dtype() != DType::kInt32 || bq->rank() != 1 || bq->numel() != M ||
          bs->dtype() != DType::kFloat32 || (bs->numel() != 1 && bs->numel() != M) ||
          !no_later_opset_attrs(*bdq))
        return false;
      if (const int bz = input_at(*bdq, 2); bz != ir::kNoValue) {
        const Tensor* z = constant_tensor(g, bz);
        if (!z || z->dtype() != DType::kInt32) return false;
        for (int64_t i = 0; i < z->numel(); ++i)
          if (z->get_as_int64(i) != 0) return false;
      }
      for (int64_t i = 0; i < M; ++i)  // DequantizeLinear's arithmetic
        m->bias.push_back(static_cast<float>(bq->data<int32_t>()[i]) * bs->data<float>()[bs->numel() > 1 ? i : 0]);
    } else {
      return false;
    }
  }
  // The output: an optional Relu / Clip, then a per-tensor QuantizeLinear, each the only reader.
  int y = conv.outputs[0];
  int r = ix.sole_reader(y);
  if (r < 0) return false;
  const ir::Node* rn = &g.nodes[static_cast<size_t>(r)];
  if (is_op(*rn, "Relu") || is_op(*rn, "Clip")) {
    if (rn->outputs.size() != 1 || rn->outputs[0] < 0) return false;
    if (is_op(*rn, "Clip")) {
      std::vector<float> bounds;
      if (!clip_bounds(g, *rn, &bounds)) return false;
    }
    m->act = r;
    y = rn->outputs[0];
    r = ix.sole_reader(y);
    if (r < 0) return false;
    rn = &g.nodes[static_cast<size_t>(r)];
  }
  if (!is_op(*rn, "QuantizeLinear") || rn->inputs[0] != y || !per_tensor_quantization(g, *rn)) return false;
  m->q = r;
  m->x_dq = ix.producers[static_cast<size_t>(conv.inputs[0])];
  m->w_dq = ix.producers[static_cast<size_t>(conv.inputs[1])];
  return true;
}

class QdqConvFusion final : public Pass {
 public:
  const char* name() const override { return "qdq_conv_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    // Without VNNI oneDNN's int8 convolutions saturate (cpu_capabilities.h): the QDQ graph then
    // runs as it is (vectorized QuantizeLinear / DequantizeLinear around float convolutions).
    if (!qdq_int8_fusions_allowed()) return false;
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& f = g.nodes[i];
      if (f.domain == kOspreyDomain && f.op_type == "QLinearConv" && !f.find_attribute("channels_last") &&
          f.inputs.size() >= 3 && f.inputs[0] >= 0) {
        // A fused node from the earlier run of this pass: its Pad may have become foldable once
        // constant folding computed the pads (static padding's shape arithmetic).
        std::vector<int64_t> pads;
        int x = f.inputs[0];
        if (constant_tensor(g, f.inputs[1]) && (f.inputs[2] == ir::kNoValue || constant_tensor(g, f.inputs[2])) &&
            conv_pads(f, &pads) && look_through_pad(g, ix, qparams(g, f.inputs[1], f.inputs[2]), &x, &pads)) {
          f.inputs[0] = x;
          f.attributes["pads"] = ints_attribute(pads);
          changed = true;
        }
        continue;
      }
      Match m;
      if (dead[i] || !match(g, ix, static_cast<int>(i), &m)) continue;
      std::vector<int> nodes = {static_cast<int>(i), m.q};
      if (m.act >= 0) nodes.push_back(m.act);
      if (!claim_match(nodes, static_cast<int>(i), &dead)) continue;
      const ir::Node xdq = g.nodes[static_cast<size_t>(m.x_dq)];
      const ir::Node wdq = g.nodes[static_cast<size_t>(m.w_dq)];
      const ir::Node q = g.nodes[static_cast<size_t>(m.q)];
      ir::Node& n = g.nodes[i];
      const std::string base = g.values[static_cast<size_t>(n.outputs[0])].name;
      // The activation, as the fused ops write it.
      if (m.act >= 0) {
        const ir::Node& a = g.nodes[static_cast<size_t>(m.act)];
        ActivationMatch am;
        am.name = is_op(a, "Relu") ? "Relu" : "Clip";
        if (am.name == "Clip") clip_bounds(g, a, &am.params);
        set_activation(n, am);
      }
      int bias = m.bias_value;
      if (!m.bias.empty()) bias = add_initializer(g, base + "_bias", Tensor::from_vector(m.bias));
      int yzp = input_at(q, 2);
      if (yzp == ir::kNoValue) yzp = add_initializer(g, base + "_y_zero_point", Tensor::from_vector(std::vector<uint8_t>{0}));
      n.attributes["pads"] = ints_attribute(m.pads);
      n.attributes.erase("auto_pad");
      n.inputs = {m.x, xdq.inputs[1], input_at(xdq, 2), wdq.inputs[0], wdq.inputs[1],
                  input_at(wdq, 2), q.inputs[1], yzp, m.has_bias ? bias : ir::kNoValue};
      n.outputs = {q.outputs[0]};
      n.op_type = "QLinearConv";
      n.domain = kOspreyDomain;
      n.opset = 1;
      n.kernel = nullptr;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

bool qdq_int8_fusions_allowed() {
  return cpu::int8_vnni_available() || g_forced.load(std::memory_order_relaxed);
}

void force_qdq_conv_fusion(bool on) {
  g_forced.store(on, std::memory_order_relaxed);
}

std::unique_ptr<Pass> make_qdq_conv_fusion() {
  return std::make_unique<QdqConvFusion>();
}

}  // namespace osprey::passes
