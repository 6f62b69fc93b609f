// matmul_add_fusion (level 2): matrix products with what follows them become one com.osprey
// FusedMatMul (Y = act(A . B + bias + Z), contract in engine/kernels/reference/fused.cc):
//   1. MatMul(A, B) with B a constant float32 2-D [K, N], followed by Add(bias) with bias a
//      constant float32 [N] (or [1, N] when A has rank >= 2), or by an activation;
//   2. Gemm(A, B, C?) with alpha = beta = 1, transA = 0, A of rank 2 (shape_inference.h),
//      float32, C absent or a constant [N] / [1, N]: trans_b = transB, bias = C;
//   3. a FusedMatMul without residual or activation followed by Add(Z) with Z of exactly Y's
//      shape (not a broadcast) that does not depend on it: Z becomes its residual input;
//   4. a FusedMatMul without activation followed by an activation (conv_activation_fusion's
//      list): the activation is folded in.
// Every removed intermediate must have no other use. Each step runs over the whole graph
// before the next, so MatMul -> Add(bias) -> Add(residual) -> Relu ends as one node.
#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

bool is_fused_matmul(const ir::Node& n) {
  return n.domain == kOspreyDomain && n.op_type == "FusedMatMul" && n.outputs.size() == 1;
}

// A constant float32 bias of N elements usable as FusedMatMul's [N] bias (a [1, N] one only
// when the product has rank >= 2, so the Add does not change the rank). Returns the value id
// of a [N] constant (a new initializer for [1, N]), or kNoValue.
int bias_of(ir::Graph& g, int c, int64_t n, bool product_rank_ge2) {
  const Tensor* t = constant_tensor(g, c);
  if (!t || t->dtype() != DType::kFloat32 || t->numel() != n) return ir::kNoValue;
  if (t->rank() == 1) return c;
  if (t->rank() != 2 || t->dim(0) != 1 || !product_rank_ge2) return ir::kNoValue;
  Tensor flat(DType::kFloat32, {n});
  for (int64_t i = 0; i < n; ++i) flat.data<float>()[i] = t->data<float>()[i];
  const int id =
      add_unique_value(g, g.values[static_cast<size_t>(c)].name + "_flat", tensor_value_type(flat));
  g.initializers[id] = std::move(flat);
  return id;
}

bool float_attr_is(const ir::Node& n, const char* name, float want) {
  const auto* a = n.find_attribute(name);
  return !a || (a->type == ir::Attribute::Type::kFloat && a->f == want);
}

bool int_attr(const ir::Node& n, const char* name, int64_t* v) {
  const auto* a = n.find_attribute(name);
  if (!a) return true;
  if (a->type != ir::Attribute::Type::kInt) return false;
  *v = a->i;
  return true;
}

bool rank_is(const GraphIndex& ix, int id, size_t rank, bool at_least) {
  if (id == ir::kNoValue || !ix.facts.has_shape[static_cast<size_t>(id)]) return false;
  const size_t r = ix.facts.shapes[static_cast<size_t>(id)].size();
  return at_least ? r >= rank : r == rank;
}

// Step 1 and 2 for node i; true when it was rewritten.
bool fuse_product(ir::Graph& g, const GraphIndex& ix, size_t i, std::vector<bool>& dead) {
  ir::Node& n = g.nodes[i];
  if (n.outputs.size() != 1 || n.outputs[0] == ir::kNoValue) return false;
  const int y = n.outputs[0];
  if (is_op(n, "Gemm")) {
    int64_t ta = 0, tb = 0;
    if (n.inputs.size() < 2 || n.inputs.size() > 3 || !int_attr(n, "transA", &ta) ||
        !int_attr(n, "transB", &tb) || ta != 0 || (tb != 0 && tb != 1) ||
        !float_attr_is(n, "alpha", 1.0f) || !float_attr_is(n, "beta", 1.0f))
      return false;
    if (ix.dtype(n.inputs[0]) != DType::kFloat32 || !rank_is(ix, n.inputs[0], 2, false) ||
        !rank_is(ix, n.inputs[1], 2, false))
      return false;
    int bias = ir::kNoValue;
    if (input_at(n, 2) != ir::kNoValue) {
      const Tensor* b = constant_tensor(g, n.inputs[1]);
      const Tensor* c = constant_tensor(g, n.inputs[2]);
      if (!b || b->rank() != 2 || !c) return false;
      bias = bias_of(g, n.inputs[2], tb ? b->dim(0) : b->dim(1), true);
      if (bias == ir::kNoValue) return false;
    }
    n.attributes.clear();
    ir::Attribute t;
    t.type = ir::Attribute::Type::kInt;
    t.i = tb;
    n.attributes["trans_b"] = t;
    make_fused(n, "FusedMatMul", 4);
    n.inputs[2] = bias;
    return true;
  }
  if (!is_op(n, "MatMul") || n.inputs.size() != 2) return false;
  const Tensor* b = constant_tensor(g, n.inputs[1]);
  if (!b || b->dtype() != DType::kFloat32 || b->rank() != 2) return false;
  const int r = ix.sole_reader(y);
  if (r < 0) return false;
  const ir::Node& add = g.nodes[static_cast<size_t>(r)];
  int bias = ir::kNoValue;
  if (is_op(add, "Add") && add.outputs.size() == 1 && !dead[static_cast<size_t>(r)]) {
    const int c = other_input(add, y);
    if (c != ir::kNoValue && c != y)
      bias = bias_of(g, c, b->dim(1), rank_is(ix, n.inputs[0], 2, true));
  }
  if (bias == ir::kNoValue) {
    ActivationMatch m;  // no bias: fuse only when an activation follows
    if (!match_activation(g, ix, y, &m)) return false;
    make_fused(n, "FusedMatMul", 4);
    return true;  // step 4 takes the activation
  }
  make_fused(n, "FusedMatMul", 4);
  n.inputs[2] = bias;
  n.outputs[0] = add.outputs[0];
  dead[static_cast<size_t>(r)] = true;
  return true;
}

class MatMulAddFusion final : public Pass {
 public:
  const char* name() const override { return "matmul_add_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    bool changed = false;
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (!dead[i] && fuse_product(g, ix, i, dead)) changed = true;
    erase_nodes(g, dead);
    // Residuals, one at a time (each rewrite changes the graph's dependencies).
    for (bool progress = true; progress;) {
      progress = false;
      ix.refresh();
      for (size_t i = 0; i < g.nodes.size() && !progress; ++i) {
        ir::Node& n = g.nodes[i];
        if (!is_fused_matmul(n) || input_at(n, 3) != ir::kNoValue || !activation_of(n).empty())
          continue;
        int add = -1, z = ir::kNoValue;
        if (!match_residual_add(g, ix, n.outputs[0], static_cast<int>(i), &add, &z)) continue;
        n.inputs[3] = z;
        n.outputs[0] = g.nodes[static_cast<size_t>(add)].outputs[0];
        std::vector<bool> gone(g.nodes.size(), false);
        gone[static_cast<size_t>(add)] = true;
        erase_nodes(g, gone);
        progress = changed = true;
      }
    }
    ix.refresh();
    dead.assign(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      ir::Node& n = g.nodes[i];
      if (dead[i] || !is_fused_matmul(n) || !activation_of(n).empty()) continue;
      ActivationMatch m;
      if (!match_activation(g, ix, n.outputs[0], &m)) continue;
      set_activation(n, m);
      n.outputs[0] = m.output;
      for (int d : m.nodes) dead[static_cast<size_t>(d)] = true;
      changed = true;
    }
    erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_matmul_add_fusion() {
  return std::make_unique<MatMulAddFusion>();
}

}  // namespace osprey::passes
