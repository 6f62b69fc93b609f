// conv_mul_add_fold (level 2): a float32 Conv with constant W (and B) followed by Mul or Add
// with a constant of one value per output channel (shape [M,1,...] or [1,M,1,...] aligned with
// the Conv output's channel axis) or a single value folds into new weights:
//   Mul(c): W'[m] = W[m] * c[m], B'[m] = B[m] * c[m];   Add(c): B'[m] = B[m] + c[m].
// The constant must not change the output's shape (its rank is at most the output's), the
// Conv's output must have no other use, and the Mul/Add's output becomes the Conv's. Repeats
// until nothing folds, so Conv -> Mul -> Add chains fold completely.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

// Per-channel values of `c` for a Conv output of rank `rank` with `m` channels, or false.
bool channel_values(const Tensor& c, int64_t rank, int64_t m, std::vector<float>* out) {
  if (c.dtype() != DType::kFloat32 || c.rank() > rank) return false;
  if (c.numel() == 1) {
    out->assign(static_cast<size_t>(m), c.data<float>()[0]);
    return true;
  }
  const int64_t channel_axis = 1 - (rank - c.rank());  // axis 1 of the output, right-aligned
  if (channel_axis < 0) return false;
  for (int64_t d = 0; d < c.rank(); ++d)
    if (c.dim(d) != (d == channel_axis ? m : 1)) return false;
  out->assign(c.data<float>(), c.data<float>() + m);
  return true;
}

class ConvMulAddFold final : public Pass {
 public:
  const char* name() const override { return "conv_mul_add_fold"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    return rewrite_until_fixed_point(g, ctx.in_subgraph, fold_one);
  }

 private:
  static bool fold_one(ir::Graph& g, const GraphIndex& ix, size_t i) {
    ir::Node& conv = g.nodes[i];
    if (!is_op(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2) return false;
    const Tensor* w = constant_tensor(g, conv.inputs[1]);
    if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->dim(0) <= 0) return false;
    const int64_t m = w->dim(0);
    const Tensor* b = nullptr;
    if (input_at(conv, 2) != ir::kNoValue) {
      b = constant_tensor(g, conv.inputs[2]);
      if (!b || b->dtype() != DType::kFloat32 || b->rank() != 1 || b->dim(0) != m) return false;
    }
    const int r = ix.sole_reader(conv.outputs[0]);
    if (r < 0) return false;
    const ir::Node& op = g.nodes[static_cast<size_t>(r)];
    const bool mul = is_op(op, "Mul");
    if ((!mul && !is_op(op, "Add")) || op.outputs.size() != 1) return false;
    const int cid = other_input(op, conv.outputs[0]);
    const Tensor* c = constant_tensor(g, cid);
    std::vector<float> cv;
    if (!c || !channel_values(*c, w->rank(), m, &cv)) return false;
    Tensor b2(DType::kFloat32, {m});
    for (int64_t k = 0; k < m; ++k) {
      const float b0 = b ? b->data<float>()[k] : 0.0f;
      b2.data<float>()[k] = mul ? b0 * cv[static_cast<size_t>(k)] : b0 + cv[static_cast<size_t>(k)];
    }
    const std::string wname = g.values[static_cast<size_t>(conv.inputs[1])].name;
    if (mul) {
      Tensor w2(DType::kFloat32, w->shape());
      const int64_t per = w->numel() / m;
      for (int64_t k = 0; k < m; ++k)
        for (int64_t j = 0; j < per; ++j)
          w2.data<float>()[k * per + j] =
              w->data<float>()[k * per + j] * cv[static_cast<size_t>(k)];
      const int wid = add_unique_value(g, wname + "_scaled", tensor_value_type(w2));
      g.initializers[wid] = std::move(w2);
      conv.inputs[1] = wid;
    }
    const int bid = add_unique_value(g, wname + "_bias", tensor_value_type(b2));
    g.initializers[bid] = std::move(b2);
    conv.inputs.resize(3);
    conv.inputs[2] = bid;
    conv.outputs[0] = op.outputs[0];
    std::vector<bool> dead(g.nodes.size(), false);
    dead[static_cast<size_t>(r)] = true;
    erase_nodes(g, dead);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_conv_mul_add_fold() {
  return std::make_unique<ConvMulAddFold>();
}

}  // namespace osprey::passes
