// com.osprey Attention (float32) on oneDNN, for every head at once and without transposes:
//   1. scores [B, H, Sq, Sk] = scale * Q K^T: one batched matmul whose source views Q
//      [B, Sq, H*D] as [B, H, Sq, D] through strides {Sq*H*D, D, H*D, 1} and whose weights view
//      K as [B, H, D, Sk] through strides {Sk*H*D, D, 1, H*D}; `scale` is the output scale;
//   2. mask added and softmax over the last axis, in place, in one pass of the vectorized row
//      kernel (kernels/cpu/row_kernels.h) per (batch, head) block, blocks split over the
//      session's threads. (oneDNN's binary post-op for the mask cost as much as half the
//      product itself on AVX2, and its softmax was a second pass over the scores.)
//   3. Y = probs V: a batched matmul whose weights view V as [B, H, Sk, D] and whose
//      destination views Y [B, Sq, H*D] as [B, H, Sq, D] (strides {Sq*H*D, D, H*D, 1}), so the
//      heads land directly in Y's layout.
// Every mask broadcast ([B,1,1,Sk], [B,1,Sq,Sk], [1,1,1,Sk], [1,H,1,1], [B,H,Sq,1],
// [B,H,Sq,Sk]) is read through strides (0 where it broadcasts). Primitives are cached per shape
// in the node's state. The scores live in a per-thread buffer that grows to the largest size
// seen (given back after a call that needed more than kKeptScoreBytes), checked against the
// session's element limit. The oracle is engine/kernels/reference/attention.cc. Precision:
// float32 always (fast mode does not mark Attention).
#include <cstring>

#include <memory>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/attention.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;
using dims = memory::dims;

struct AttentionEntry {
  dnnl::matmul qk, pv;
  memory::desc q_md, k_md, s_md, v_md, y_md;
  memory::desc qk_scratch, pv_scratch;
};

struct AttentionState final : KernelState {
  ShapeCache<AttentionEntry> cache;
};

memory::desc strided(const dims& d, const dims& strides) {
  return memory::desc(d, memory::data_type::f32, strides);
}

// Score buffers up to this size stay with their thread between calls.
constexpr size_t kKeptScoreBytes = size_t{16} << 20;

// The calling thread's score buffer: grown on demand, kept between calls up to kKeptScoreBytes.
struct ScoreBuffer {
  std::unique_ptr<float[]> data;
  size_t capacity = 0;  // floats

  float* get(size_t n) {
    if (n > capacity) {
      data.reset();
      data = std::make_unique_for_overwrite<float[]>(n);
      capacity = n;
    }
    return data.get();
  }
  void trim() {
    if (capacity * sizeof(float) > kKeptScoreBytes) {
      data.reset();
      capacity = 0;
    }
  }
};

// The scores product, scaled.
dnnl::matmul::primitive_desc scores_pd(const AttentionEntry& e, float scale) {
  dnnl::primitive_attr attr;
  if (scale != 1.0f) attr.set_output_scales(0, {scale});
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
  e->v_md = strided({B, H, Sk, D}, {Sk * HD, D, HD, 1});
  e->y_md = strided({B, H, Sq, D}, {Sq * HD, D, HD, 1});
  use_threads(threads);
  auto qk_pd = scores_pd(*e, d.scale);
  e->qk = dnnl::matmul(qk_pd);
  e->qk_scratch = qk_pd.scratchpad_desc();
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
  const Shape score_shape = {d.batch, d.heads, d.q_len, d.kv_len};
  OSPREY_ASSIGN_OR_RETURN(const int64_t score_count,
                          Tensor::checked_numel(DType::kFloat32, score_shape, ctx.max_elements()));
  std::shared_ptr<AttentionState> local;
  auto* st = dynamic_cast<AttentionState*>(ctx.state());
  if (!st) {
    local = std::make_shared<AttentionState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  int32_t scale_bits;
  std::memcpy(&scale_bits, &d.scale, sizeof scale_bits);
  thread_local std::vector<int64_t> key;
  key.assign({threads, d.batch, d.heads, d.q_len, d.kv_len, d.head_size, scale_bits});
  const float* mask = d.has_mask ? ctx.input(3).data<float>() : nullptr;
  // Mask strides over [B, H, Sq, Sk], 0 where the mask broadcasts.
  const auto& m = d.mask;
  const int64_t ms_b = m[0] > 1 ? m[1] * m[2] * m[3] : 0, ms_h = m[1] > 1 ? m[2] * m[3] : 0;
  const int64_t ms_q = m[2] > 1 ? m[3] : 0, ms_k = m[3] > 1 ? 1 : 0;
  thread_local ScoreBuffer score_buffer;
  float* scores = score_buffer.get(static_cast<size_t>(score_count));
  Status status = guarded("attention", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get(key, [&] { return build(d, threads); }));
    use_threads(threads);
    execute(e->qk,
            {arg(DNNL_ARG_SRC, e->q_md, q.raw_data()),
             arg(DNNL_ARG_WEIGHTS, e->k_md, ctx.input(1).raw_data()),
             arg(DNNL_ARG_DST, e->s_md, scores)},
            e->qk_scratch);
    const VectorIsa isa = best_vector_isa();
    const int64_t block = d.q_len * d.kv_len;
    auto blocks_fn = [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.heads, h = bh % d.heads;
        softmax_rows(isa, scores + bh * block, d.q_len, d.kv_len,
                     mask ? mask + b * ms_b + h * ms_h : nullptr, ms_q, ms_k);
      }
    };
    if (ctx.pool())
      ctx.pool()->parallel_for(d.batch * d.heads, block * 24, blocks_fn);
    else
      blocks_fn(0, d.batch * d.heads);
    execute(e->pv,
            {arg(DNNL_ARG_SRC, e->s_md, scores),
             arg(DNNL_ARG_WEIGHTS, e->v_md, ctx.input(2).raw_data()),
             arg(DNNL_ARG_DST, e->y_md, y.raw_data())},
            e->pv_scratch);
    return Status::Ok();
  });
  score_buffer.trim();
  return status;
}

Result<std::shared_ptr<KernelState>> prepare_attention(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<AttentionState>());
}

}  // namespace osprey::cpu
