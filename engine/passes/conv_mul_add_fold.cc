// conv_mul_add_fold (level 2): a float32 Conv or ConvTranspose with constant W (and B) followed
// by Mul or Add with a constant of one value per output channel (shape [M,1,...] or [1,M,1,...]
// aligned with the output's channel axis) or a single value, or by a BatchNormalization in
// inference mode, folds into new weights:
//   Mul(c): W'[m] = W[m] * c[m], B'[m] = B[m] * c[m];   Add(c): B'[m] = B[m] + c[m];
//   BatchNormalization: W'[m] = W[m] * s[m], B'[m] = (B[m] - mean[m]) * s[m] + bias[m].
// (conv_bn_fold, level 1, takes a Conv's BatchNormalization; this one takes what a bias Add
// hid from it, as after a ConvTranspose exported with its bias as an Add. W[m] is every weight
// feeding output channel m: ConvTranspose's are W[c, m - g*M/G] of its group's inputs c.)
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
  // Output channel of weight element `idx`: Conv's W is [M, C/G, k...]; ConvTranspose's is
  // [C, M/G, k...], element (c, j, ...) feeding output channel (c / (C/G)) * (M/G) + j.
  static int64_t out_channel(const Tensor& w, bool transpose, int64_t group, int64_t idx) {
    const int64_t rest = w.numel() / (w.dim(0) * w.dim(1));
    if (!transpose) return idx / (w.dim(1) * rest);
    const int64_t c = idx / (w.dim(1) * rest), j = (idx / rest) % w.dim(1);
    return (c / (w.dim(0) / group)) * w.dim(1) + j;
  }

  static bool fold_one(ir::Graph& g, const GraphIndex& ix, size_t i) {
    ir::Node& conv = g.nodes[i];
    const bool transpose = is_op(conv, "ConvTranspose");
    if ((!transpose && !is_op(conv, "Conv")) || conv.outputs.size() != 1 || conv.inputs.size() < 2)
      return false;
    const Tensor* w = constant_tensor(g, conv.inputs[1]);
    if (!w || w->dtype() != DType::kFloat32 || w->rank() < 3 || w->dim(0) <= 0 || w->dim(1) <= 0)
      return false;
    int64_t group = 1;
    if (const ir::Attribute* a = conv.find_attribute("group")) {
      if (a->type != ir::Attribute::Type::kInt || a->i < 1) return false;
      group = a->i;
    }
    if (transpose && w->dim(0) % group != 0) return false;
    const int64_t m = transpose ? w->dim(1) * group : w->dim(0);
    const Tensor* b = nullptr;
    if (input_at(conv, 2) != ir::kNoValue) {
      b = constant_tensor(g, conv.inputs[2]);
      if (!b || b->dtype() != DType::kFloat32 || b->rank() != 1 || b->dim(0) != m) return false;
    }
    const int r = ix.sole_reader(conv.outputs[0]);
    if (r < 0) return false;
    const ir::Node& op = g.nodes[static_cast<size_t>(r)];
    if (op.outputs.size() != 1 || op.outputs[0] == ir::kNoValue) return false;
    // The follower as y * scale[k] + shift(b0, k) per output channel k.
    std::vector<double> scale;
    std::vector<float> cv;
    BatchNormParams bnp;
    const bool mul = is_op(op, "Mul"), bn = batch_norm_params(g, op, m, &bnp);
    if (bn) {
      if (op.inputs[0] != conv.outputs[0]) return false;
      scale = bnp.scale;
    } else {
      if (!mul && !is_op(op, "Add")) return false;
      const Tensor* c = constant_tensor(g, other_input(op, conv.outputs[0]));
      if (!c || !channel_values(*c, w->rank(), m, &cv)) return false;
      if (mul) scale.assign(cv.begin(), cv.end());
    }
    Tensor b2(DType::kFloat32, {m});
    for (int64_t k = 0; k < m; ++k) {
      const auto u = static_cast<size_t>(k);
      const float b0 = b ? b->data<float>()[k] : 0.0f;
      b2.data<float>()[k] = bn    ? static_cast<float>((b0 - bnp.mean->data<float>()[k]) * scale[u] +
                                                       bnp.bias->data<float>()[k])
                            : mul ? b0 * cv[u]
                                  : b0 + cv[u];
    }
    const std::string wname = g.values[static_cast<size_t>(conv.inputs[1])].name;
    if (!scale.empty()) {
      Tensor w2(DType::kFloat32, w->shape());
      for (int64_t j = 0; j < w->numel(); ++j) {
        const double sc = scale[static_cast<size_t>(out_channel(*w, transpose, group, j))];
        w2.data<float>()[j] = bn ? static_cast<float>(w->data<float>()[j] * sc)
                                 : w->data<float>()[j] * static_cast<float>(sc);
      }
      const int wid = add_unique_value(g, wname + (bn ? "_bn" : "_scaled"), tensor_value_type(w2));
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
