// conv_bn_fold (level 1): Conv -> BatchNormalization (inference) becomes one Conv with
//   W'[m] = W[m] * s[m],  B'[m] = (B[m] - mean[m]) * s[m] + bias[m],  s = scale / sqrt(var + eps)
// when the Conv is float32 with constant W (and B, if any), the BatchNormalization has constant
// scale/bias/mean/var of one value per output channel, produces only its first output, and is
// the only reader of the Conv's output. (With only its first output requested, the kernel runs
// BatchNormalization in inference mode at every opset.) The folded weights are new initializers
// (the originals may be shared); dead_code_elimination drops the old ones once unused.
#include <cmath>

#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

class ConvBnFold final : public Pass {
 public:
  const char* name() const override { return "conv_bn_fold"; }
  int level() const override { return 1; }

  Result<bool> run(ir::Graph& g, PassContext&) override {
    const ValueUses uses = compute_uses(g);
    std::vector<int> producer(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      for (int o : g.nodes[i].outputs)
        if (o != ir::kNoValue) producer[static_cast<size_t>(o)] = static_cast<int>(i);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t bi = 0; bi < g.nodes.size(); ++bi) {
      const ir::Node& bn = g.nodes[bi];
      if (!batch_norm_inference(bn) || bn.inputs[0] == ir::kNoValue) continue;
      const int y = bn.inputs[0];
      const auto yu = static_cast<size_t>(y);
      if (uses.readers[yu] != 1 || uses.output[yu] || uses.captured[yu] || producer[yu] < 0)
        continue;
      ir::Node& conv = g.nodes[static_cast<size_t>(producer[yu])];
      if (!conv.domain.empty() || conv.op_type != "Conv" || conv.outputs.size() != 1 ||
          conv.inputs.size() < 2)
        continue;
      const Tensor* w = constant_tensor(g, conv.inputs[1]);
      if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->dim(0) <= 0) continue;
      const int64_t m = w->dim(0);
      const Tensor* b = nullptr;
      if (conv.inputs.size() > 2 && conv.inputs[2] != ir::kNoValue) {
        b = constant_tensor(g, conv.inputs[2]);
        if (!b || b->dtype() != DType::kFloat32 || b->rank() != 1 || b->dim(0) != m) continue;
      }
      BatchNormParams bnp;
      if (!batch_norm_params(g, bn, m, &bnp)) continue;
      const std::vector<double>& s = bnp.scale;
      Tensor w2(DType::kFloat32, w->shape());
      const int64_t per = w->numel() / m;
      for (int64_t c = 0; c < m; ++c)
        for (int64_t i = 0; i < per; ++i)
          w2.data<float>()[c * per + i] =
              static_cast<float>(w->data<float>()[c * per + i] * s[static_cast<size_t>(c)]);
      Tensor b2(DType::kFloat32, {m});
      for (int64_t c = 0; c < m; ++c) {
        const double b0 = b ? b->data<float>()[c] : 0.0;
        b2.data<float>()[c] = static_cast<float>(
            (b0 - bnp.mean->data<float>()[c]) * s[static_cast<size_t>(c)] + bnp.bias->data<float>()[c]);
      }
      const std::string wname = g.values[static_cast<size_t>(conv.inputs[1])].name;
      const int wid = add_unique_value(g, wname + "_bn", tensor_value_type(w2));
      const int bid = add_unique_value(
          g, (b ? g.values[static_cast<size_t>(conv.inputs[2])].name : wname) + "_bn",
          tensor_value_type(b2));
      g.initializers[wid] = std::move(w2);
      g.initializers[bid] = std::move(b2);
      conv.inputs.resize(3);
      conv.inputs[1] = wid;
      conv.inputs[2] = bid;
      conv.outputs[0] = bn.outputs[0];
      dead[bi] = true;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_bn_fold() {
  return std::make_unique<ConvBnFold>();
}

}  // namespace osprey::passes
