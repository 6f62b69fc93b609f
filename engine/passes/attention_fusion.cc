// attention_fusion (level 2): multi-head scaled dot-product attention as BERT-style exports
// write it becomes one com.osprey Attention(Q, K, V, mask?) with num_heads = H and scale
// (contract in engine/kernels/reference/attention.cc). Matched, from the Softmax outwards:
//   qt = Transpose(Reshape(Q, sq), [0,2,1,3])          Q [B, Sq, H*D], sq gives [B, Sq, H, D]
//   kt = Transpose(Reshape(K, sk), [0,2,3,1])          K [B, Sk, H*D]
//   vt = Transpose(Reshape(V, sv), [0,2,1,3])          V of K's shape
//   s  = MatMul(qt', kt') then optionally Div(s, c) or Mul(s, c) / Mul(c, s), c a float32 scalar
//        constant; qt' / kt' are qt / kt or Mul(qt, c) / Div(qt, c) (the same for kt); every
//        constant multiplies into `scale`
//   s  = Add(s, mask) or Add(mask, s) (optional), mask of known rank <= 4 whose dims are each 1
//        or the scores' dim (so the Add does not broadcast the scores up)
//   p  = Softmax(s, axis = -1 or 3; the default axis only from opset 13)
//   y  = Reshape(Transpose(MatMul(p, vt), [0,2,1,3]), sy)    sy gives [B, Sq, H*D]
// A chain of Transposes whose composed permutation is the one named counts as that Transpose.
// The reshape shapes are checked through shape_inference.h, so a constant shape ([1,128,12,32],
// [0,0,12,32]) and the Concat(Unsqueeze(Gather(Shape(t), 0)), Unsqueeze(Gather(Shape(t), 1)),
// [H], [D]) form pass alike when they give exactly Q's (K's) dims 0 and 1 (the same symbols,
// or the same numbers) followed by the constants H, D (or H*D); an unknown or different
// leading dim leaves the graph alone. Q, K and V are float32; every intermediate value (qt,
// kt, vt, the scores, p, the product, its transpose) has no other reader and is not a graph
// output, except that the Transpose before the last Reshape may also feed that Reshape's own
// shape computation (Shape nodes). The nodes that only compute the four reshape shapes are
// removed with the match. Not matched: the scale applied to Q before its Reshape or Transpose,
// a mask Add before the scale, a mask with unknown shape, Q/K/V packed in one tensor (split
// later), or anything in a subgraph whose input shapes are unknown.
#include <cmath>
#include <set>

#include "passes/fusion_util.h"
#include "passes/pass.h"

namespace osprey::passes {
namespace {

class AttentionMatcher {
 public:
  AttentionMatcher(const ir::Graph& g, const GraphIndex& ix) : g_(g), ix_(ix) {}
  std::set<int> nodes;  // every node the match removes (the last Reshape included)
  int q = ir::kNoValue, k = ir::kNoValue, v = ir::kNoValue, mask = ir::kNoValue;
  int out_reshape = -1;
  int64_t heads = 0;
  double scale = 1.0;

  // Starting at the Softmax (node index `i`).
  bool match(int i) {
    nodes = {i};
    const ir::Node& sm = node(i);
    if (!is_op(sm, "Softmax") || sm.inputs.size() != 1 || sm.outputs.size() != 1 ||
        !softmax_on_last_axis(sm))
      return false;
    const int s = sm.inputs[0];
    if (ix_.dtype(s) != DType::kFloat32 || !rank_is(s, 4) || !sole(s)) return false;
    if (!scores(s)) return false;
    // p -> MatMul(p, vt) -> Transpose -> Reshape.
    const int pv = reader_of(sm.outputs[0], "MatMul");
    if (pv < 0 || node(pv).inputs[0] != sm.outputs[0]) return false;
    int v_reshape = -1;
    if (!transposes_to_reshape(node(pv).inputs[1], {0, 2, 1, 3}, &v_reshape)) return false;
    v = node(v_reshape).inputs[0];
    const int t = reader_of(node(pv).outputs[0], "Transpose");
    std::vector<int64_t> perm;
    if (t < 0 || !perm_of(node(t), &perm) || perm != std::vector<int64_t>{0, 2, 1, 3}) return false;
    if (!output_reshape(node(t).outputs[0])) return false;
    return heads_agree(v_reshape) && inputs_agree();
  }

 private:
  const ir::Node& node(int i) const { return g_.nodes[static_cast<size_t>(i)]; }
  bool sole(int v) const { return only_read_by_nodes(ix_.uses, v, 1); }
  const SymShape* shape(int v) const {
    return v != ir::kNoValue && ix_.facts.has_shape[static_cast<size_t>(v)]
               ? &ix_.facts.shapes[static_cast<size_t>(v)]
               : nullptr;
  }
  bool rank_is(int v, size_t r) const {
    const SymShape* s = shape(v);
    return s && s->size() == r;
  }
  // The producer of `v` when it is `op` with one output, else -1.
  int producer_of(int v, const char* op) const {
    const int p = v == ir::kNoValue ? -1 : ix_.producers[static_cast<size_t>(v)];
    if (p < 0 || !is_op(node(p), op) || node(p).outputs.size() != 1) return -1;
    return p;
  }
  // The only reader of `v` when it is `op` with one output, else -1; joins the match.
  int reader_of(int v, const char* op) {
    const int r = ix_.sole_reader(v);
    if (r < 0 || !is_op(node(r), op) || node(r).outputs.size() != 1 ||
        node(r).outputs[0] == ir::kNoValue)
      return -1;
    nodes.insert(r);
    return r;
  }

  static bool perm_of(const ir::Node& n, std::vector<int64_t>* perm) {
    const auto* a = n.find_attribute("perm");
    if (!a || a->type != ir::Attribute::Type::kInts) return false;
    *perm = a->ints;
    return true;
  }

  bool softmax_on_last_axis(const ir::Node& sm) const {
    const auto* a = sm.find_attribute("axis");
    if (!a) return sm.opset >= 13;
    return a->type == ir::Attribute::Type::kInt && (a->i == -1 || a->i == 3);
  }

  // A float32 scalar constant multiplier in Mul(x, c) / Mul(c, x) / Div(x, c) at node `p`:
  // returns x and multiplies `scale`, or kNoValue.
  int scaled_operand(int p) {
    const ir::Node& n = node(p);
    if (n.inputs.size() != 2) return ir::kNoValue;
    double c;
    if (is_op(n, "Div")) {
      if (!scalar_constant(g_, n.inputs[1], &c) || c == 0.0) return ir::kNoValue;
      scale /= c;
      return n.inputs[0];
    }
    for (int k = 0; k < 2; ++k)
      if (scalar_constant(g_, n.inputs[static_cast<size_t>(k)], &c)) {
        scale *= c;
        return n.inputs[static_cast<size_t>(1 - k)];
      }
    return ir::kNoValue;
  }
  // `v` or, when `v` is the sole-read output of a scalar Mul/Div, that op's other operand.
  int unscaled(int v) {
    const int p = ix_.producers[static_cast<size_t>(v)];
    if (p < 0 || !(is_op(node(p), "Mul") || is_op(node(p), "Div")) || !sole(v)) return v;
    const int x = scaled_operand(p);
    if (x == ir::kNoValue) return v;
    nodes.insert(p);
    return x;
  }

  // s (the Softmax input): [Add(., mask)] of [Div/Mul(., c)] of MatMul(qt', kt').
  bool scores(int s) {
    const int add = producer_of(s, "Add");
    if (add < 0) return product(s, s);
    const ir::Node& a = node(add);
    if (a.inputs.size() != 2 || a.inputs[0] == a.inputs[1]) return false;
    nodes.insert(add);
    const std::set<int> kept = nodes;
    for (int k = 0; k < 2; ++k) {  // either operand may be the mask
      const int x = a.inputs[static_cast<size_t>(k)];
      const int m = a.inputs[static_cast<size_t>(1 - k)];
      if (sole(x) && mask_fits(m, s) && product(x, s)) {
        mask = m;
        return true;
      }
      nodes = kept;
      scale = 1.0;
    }
    return false;
  }

  // x (read once): [Div/Mul(., c)] of MatMul(qt', kt'), the scores before any mask.
  bool product(int x, int s) {
    const int cur = unscaled(x);
    const int mm = producer_of(cur, "MatMul");
    if (mm < 0 || node(mm).inputs.size() != 2 || !sole(cur) ||
        !(shape(cur) && *shape(cur) == *shape(s)))
      return false;
    nodes.insert(mm);
    const int a = unscaled(node(mm).inputs[0]);
    const int b = unscaled(node(mm).inputs[1]);
    int q_reshape = -1, k_reshape = -1;
    if (!transposes_to_reshape(a, {0, 2, 1, 3}, &q_reshape) ||
        !transposes_to_reshape(b, {0, 2, 3, 1}, &k_reshape))
      return false;
    q = node(q_reshape).inputs[0];
    k = node(k_reshape).inputs[0];
    return heads_agree(q_reshape) && heads_agree(k_reshape);
  }

  // mask's dims, right-aligned against the scores `s`, are each 1 or the scores' dim.
  bool mask_fits(int m, int s) const {
    const SymShape* ms = shape(m);
    const SymShape* ss = shape(s);
    if (!ms || !ss || ms->size() > ss->size()) return false;
    const size_t off = ss->size() - ms->size();
    for (size_t d = 0; d < ms->size(); ++d) {
      const SymDim& md = (*ms)[d];
      if (!(md.fixed() && md.value == 1) && !(md == (*ss)[off + d])) return false;
    }
    return true;
  }

  // `v` is a chain of sole-read Transposes whose composed permutation is `want`, applied to the
  // sole-read output of a Reshape (whose index goes to *reshape).
  bool transposes_to_reshape(int v, const std::vector<int64_t>& want, int* reshape) {
    std::vector<int64_t> perm = {0, 1, 2, 3};  // composed so far: out[i] = in[perm[i]]
    int cur = v;
    for (int depth = 0; depth < 4; ++depth) {
      const int t = producer_of(cur, "Transpose");
      if (t < 0 || !sole(cur)) break;
      std::vector<int64_t> p;
      if (!perm_of(node(t), &p) || p.size() != 4) return false;
      for (auto& e : perm) {
        if (e < 0 || e >= 4) return false;
        e = p[static_cast<size_t>(e)];
      }
      nodes.insert(t);
      cur = node(t).inputs[0];
    }
    if (perm != want || cur == v) return false;
    const int r = producer_of(cur, "Reshape");
    if (r < 0 || !sole(cur) || node(r).inputs.size() != 2) return false;
    nodes.insert(r);
    add_shape_feeders(r);
    *reshape = r;
    return true;
  }

  // A head-splitting Reshape: [d0, d1, H*D] -> [d0, d1, H, D] with H, D fixed and the leading
  // dims the input's own. Sets or checks `heads`.
  bool heads_agree(int r) {
    const int x = node(r).inputs[0];
    const SymShape* in = shape(x);
    const SymShape* out = shape(node(r).outputs[0]);
    if (!in || !out || in->size() != 3 || out->size() != 4) return false;
    if (!((*out)[0] == (*in)[0]) || !((*out)[1] == (*in)[1])) return false;
    const SymDim &h = (*out)[2], &d = (*out)[3], &hd = (*in)[2];
    if (!h.fixed() || !d.fixed() || !hd.fixed() || h.value < 1 || h.value * d.value != hd.value)
      return false;
    if (heads != 0 && heads != h.value) return false;
    heads = h.value;
    return ix_.dtype(x) == DType::kFloat32;
  }

  // Q, K, V: batch and hidden size agree, K and V have one shape.
  bool inputs_agree() const {
    const SymShape *qs = shape(q), *ks = shape(k);
    return qs && ks && (*qs)[0] == (*ks)[0] && (*qs)[2] == (*ks)[2] && ix_.facts.same_shape(k, v);
  }

  // The Transpose output `ot` [B, Sq, H, D] feeds a Reshape to Q's shape, and nothing else
  // besides that Reshape's shape computation.
  bool output_reshape(int ot) {
    if (ix_.uses.captured[static_cast<size_t>(ot)] || ix_.uses.output[static_cast<size_t>(ot)])
      return false;
    int r = -1;
    for (int rd : ix_.readers[static_cast<size_t>(ot)])
      if (is_op(node(rd), "Reshape") && node(rd).inputs.size() == 2 && node(rd).inputs[0] == ot &&
          node(rd).inputs[1] != ot)
        r = rd;
    if (r < 0 || node(r).outputs.size() != 1 || node(r).outputs[0] == ir::kNoValue) return false;
    nodes.insert(r);
    add_shape_feeders(r);
    for (int rd : ix_.readers[static_cast<size_t>(ot)])
      if (!nodes.count(rd)) return false;
    const SymShape* ys = shape(node(r).outputs[0]);
    const SymShape* qs = shape(q);
    if (!ys || !qs || *ys != *qs) return false;
    out_reshape = r;
    return true;
  }

  // Adds the nodes that exist only to compute Reshape `r`'s shape input: every output read only
  // by such nodes or by `r` as its shape (Shape -> Gather -> Unsqueeze -> Concat and the like).
  void add_shape_feeders(int r) {
    std::set<int> feed;
    auto only_feeds = [&](int p) {
      const ir::Node& n = node(p);
      if (has_subgraph(n) || n.outputs.empty()) return false;
      for (int o : n.outputs) {
        if (o == ir::kNoValue) continue;
        if (ix_.uses.captured[static_cast<size_t>(o)] || ix_.uses.output[static_cast<size_t>(o)])
          return false;
        for (int rd : ix_.readers[static_cast<size_t>(o)])
          if (!feed.count(rd) && !(rd == r && node(r).inputs[0] != o)) return false;
      }
      return true;
    };
    for (bool grew = true; grew;) {
      grew = false;
      std::vector<int> frontier = {node(r).inputs[1]};
      for (int f : feed)
        for (int in : node(f).inputs) frontier.push_back(in);
      for (int val : frontier) {
        const int p = val == ir::kNoValue ? -1 : ix_.producers[static_cast<size_t>(val)];
        if (p < 0 || feed.count(p) || !only_feeds(p)) continue;
        feed.insert(p);
        grew = true;
      }
    }
    nodes.insert(feed.begin(), feed.end());
  }

  const ir::Graph& g_;
  const GraphIndex& ix_;
};

class AttentionFusion final : public Pass {
 public:
  const char* name() const override { return "attention_fusion"; }
  int level() const override { return 2; }

  Result<bool> run(ir::Graph& g, PassContext& ctx) override {
    GraphIndex ix(g, ctx.in_subgraph);
    std::vector<bool> dead(g.nodes.size(), false);
    bool changed = false;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      if (dead[i] || !is_op(g.nodes[i], "Softmax")) continue;
      AttentionMatcher m(g, ix);
      if (!m.match(static_cast<int>(i)) || !std::isfinite(m.scale)) continue;
      if (!claim_match({m.nodes.begin(), m.nodes.end()}, m.out_reshape, &dead)) continue;
      ir::Node& att = g.nodes[static_cast<size_t>(m.out_reshape)];
      make_fused(att, "Attention", 0);
      att.inputs = {m.q, m.k, m.v};
      if (m.mask != ir::kNoValue) att.inputs.push_back(m.mask);
      att.attributes.clear();
      ir::Attribute heads, scale;
      heads.type = ir::Attribute::Type::kInt;
      heads.i = m.heads;
      scale.type = ir::Attribute::Type::kFloat;
      scale.f = static_cast<float>(m.scale);
      att.attributes["num_heads"] = heads;
      att.attributes["scale"] = scale;
      changed = true;
    }
    if (changed) erase_nodes(g, dead);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_attention_fusion() {
  return std::make_unique<AttentionFusion>();
}

}  // namespace osprey::passes
