// com.osprey Attention (float32) on oneDNN, for every head at once and without transposes:
//   1. scores [B, H, Sq, Sk] = scale * Q K^T (+ mask): one batched matmul whose source views Q
//      [B, Sq, H*D] as [B, H, Sq, D] through strides {Sq*H*D, D, H*D, 1} and whose weights view
//      K as [B, H, D, Sk] through strides {Sk*H*D, D, 1, H*D}; `scale` is the output scale and
//      the mask a broadcasting binary-add post-op;
//   2. softmax over the last axis of the scores, in place (oneDNN softmax on [B*H*Sq, Sk]);
//   3. Y = probs V: a batched matmul whose weights view V as [B, H, Sk, D] and whose
//      destination views Y [B, Sq, H*D] as [B, H, Sq, D] (strides {Sq*H*D, D, H*D, 1}), so the
//      heads land directly in Y's layout.
// Every mask broadcast the tests cover ([B,1,1,Sk], [B,1,Sq,Sk], [1,1,1,Sk], [1,H,1,1],
// [B,H,Sq,1], [B,H,Sq,Sk]) runs on oneDNN's jit matmuls with the post-op (oneDNN picks its own
// slower implementation for a broadcast it does not vectorize). Primitives are cached per shape
// in the node's state. The scores are a temporary of the run, checked against the session's
// element limit. The oracle is engine/kernels/reference/attention.cc. Precision: float32
// always (fast mode does not mark Attention).
#include <cstring>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/attention.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;
using dims = memory::dims;

struct AttentionEntry {
  dnnl::matmul qk, pv;
  dnnl::softmax_forward softmax;
  memory::desc q_md, k_md, s_md, rows_md, v_md, y_md, mask_md;
  memory::desc qk_scratch, sm_scratch, pv_scratch;
};

struct AttentionState final : KernelState {
  ShapeCache<AttentionEntry> cache;
};

memory::desc strided(const dims& d, const dims& strides) {
  return memory::desc(d, memory::data_type::f32, strides);
}

// The scores product, with the mask as a binary-add post-op when `post_op`.
dnnl::matmul::primitive_desc scores_pd(const AttentionEntry& e, float scale, bool post_op) {
  dnnl::primitive_attr attr;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
  if (post_op) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, e.mask_md);
    attr.set_post_ops(ops);
  }
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return dnnl::matmul::primitive_desc(dnnl::matmul::desc(e.q_md, e.k_md, e.s_md), attr,
                                      dnnl_engine());
}

Result<std::shared_ptr<const AttentionEntry>> build(const ref::AttentionDims& d, int threads) {
  auto e = std::make_shared<AttentionEntry>();
  const int64_t B = d.batch, H = d.heads, Sq = d.q_len, Sk = d.kv_len, D = d.head_size;
  const int64_t HD = d.hidden();
  e->q_md = strided({B, H, Sq, D}, {Sq * HD, D, HD, 1});
  e->k_md = strided({B, H, D, Sk}, {Sk * HD, D, 1, HD});
  e->s_md = strided({B, H, Sq, Sk}, {H * Sq * Sk, Sq * Sk, Sk, 1});
  e->rows_md = strided({B * H * Sq, Sk}, {Sk, 1});
  e->v_md = strided({B, H, Sk, D}, {Sk * HD, D, HD, 1});
  e->y_md = strided({B, H, Sq, D}, {Sq * HD, D, HD, 1});
  use_threads(threads);
  if (d.has_mask) {
    const dims m = {d.mask[0], d.mask[1], d.mask[2], d.mask[3]};
    e->mask_md = strided(m, {m[1] * m[2] * m[3], m[2] * m[3], m[3], 1});
  }
  auto qk_pd = scores_pd(*e, d.scale, d.has_mask);
  e->qk = dnnl::matmul(qk_pd);
  e->qk_scratch = qk_pd.scratchpad_desc();
  dnnl::primitive_attr sm_attr;
  sm_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::softmax_forward::primitive_desc sm_pd({dnnl::prop_kind::forward_inference, e->rows_md, 1},
                                              sm_attr, dnnl_engine());
  e->softmax = dnnl::softmax_forward(sm_pd);
  e->sm_scratch = sm_pd.scratchpad_desc();
  dnnl::primitive_attr pv_attr;
  pv_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pv_pd(dnnl::matmul::desc(e->s_md, e->v_md, e->y_md), pv_attr,
                                     dnnl_engine());
  e->pv = dnnl::matmul(pv_pd);
  e->pv_scratch = pv_pd.scratchpad_desc();
  return std::shared_ptr<const AttentionEntry>(e);
}

}  // namespace

Status attention(KernelContext& ctx) {
  ref::AttentionDims d;
  OSPREY_RETURN_IF_ERROR(ref::attention_dims(ctx, &d));
  const Tensor& q = ctx.input(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, q.shape()));
  if (y.numel() == 0) return Status::Ok();
  if (d.kv_len == 0) {  // an empty softmax row weighs nothing
    std::memset(y.raw_data(), 0, y.nbytes());
    return Status::Ok();
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor scores, Tensor::create_uninitialized(
                                             DType::kFloat32, {d.batch, d.heads, d.q_len, d.kv_len},
                                             ctx.max_elements()));
  std::shared_ptr<AttentionState> local;
  auto* st = dynamic_cast<AttentionState*>(ctx.state());
  if (!st) {
    local = std::make_shared<AttentionState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  int32_t scale_bits;
  std::memcpy(&scale_bits, &d.scale, sizeof scale_bits);
  const std::vector<int64_t> key = {threads,   d.batch,     d.heads,    d.q_len,
                                    d.kv_len,  d.head_size, d.has_mask, d.mask[0],
                                    d.mask[1], d.mask[2],   d.mask[3],  scale_bits};
  const float* mask = d.has_mask ? ctx.input(3).data<float>() : nullptr;
  return guarded("attention", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get(key, [&] { return build(d, threads); }));
    use_threads(threads);
    ExecArgs qk_args = {arg(DNNL_ARG_SRC, e->q_md, q.raw_data()),
                        arg(DNNL_ARG_WEIGHTS, e->k_md, ctx.input(1).raw_data()),
                        arg(DNNL_ARG_DST, e->s_md, scores.raw_data())};
    if (mask) qk_args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, e->mask_md, mask));
    execute(e->qk, qk_args, e->qk_scratch);
    execute(e->softmax,
            {arg(DNNL_ARG_SRC, e->rows_md, scores.raw_data()), arg(DNNL_ARG_DST, e->rows_md, scores.raw_data())},
            e->sm_scratch);
    execute(e->pv,
            {arg(DNNL_ARG_SRC, e->s_md, scores.raw_data()),
             arg(DNNL_ARG_WEIGHTS, e->v_md, ctx.input(2).raw_data()),
             arg(DNNL_ARG_DST, e->y_md, y.raw_data())},
            e->pv_scratch);
    return Status::Ok();
  });
}

Result<std::shared_ptr<KernelState>> prepare_attention(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<AttentionState>());
}

}  // namespace osprey::cpu
