// com.osprey Attention (float32), one (batch, head) pair at a time, with no transposes and no
// [B, H, Sq, Sk] score tensor. Q [B, Sq, H*D], K and V [B, Sk, H*D] are read in place: head h
// of row s is the D floats at s * H*D + h * D (with Q, K and V packed in one [B, S, 3*H*D]
// input, at s * 3*H*D + h * D, K's H*D and V's 2*H*D further on). Per pair:
//   1. K's head is packed as scale * K^T panels and V's as V panels
//      (kernels/cpu/attention_tiles.h);
//   2. per block of query rows (attention_block_rows: about 32 KiB of scores, whole register
//      tiles of rows): scores =
//      Q (scale * K^T) on register tiles; the mask added and e^(s - max) over each row by the
//      vectorized row kernel (kernels/cpu/row_kernels.h), which keeps each row's 1 / sum;
//      Y = e V on register tiles, each row times its 1 / sum as the tile is stored (D values a
//      row instead of Sk), written straight into Y's [B, Sq, H*D] layout.
// The pairs are split over the session's threads. Every mask broadcast ([B,1,1,Sk],
// [B,1,Sq,Sk], [1,1,1,Sk], [1,H,1,1], [B,H,Sq,1], [B,H,Sq,Sk]) is read through strides (0
// where it broadcasts). Each thread's packed panels and score block live in a buffer that grows
// to the largest size seen (given back after a call that needed more than kKeptWorkBytes),
// checked against the session's element limit. The oracle is
// engine/kernels/reference/attention.cc. Precision: float32, or in fast mode (the node's
// compute_precision = "bf16", on a CPU with avx512_bf16) both products in bfloat16 with float32
// accumulation (kernels/cpu/attention_bf16.h): Q, scale * K, V and the softmax's e^(s - max)
// are rounded to bfloat16 as they are packed; the scores, the softmax and Y stay float32.
//
// Why: memory. The form this replaced (one strided batched oneDNN matmul per product over all
// heads) held every head's scores at once: [B, H, Sq, Sk] floats, 0.75 MiB for 12 heads of 128
// tokens but 768 MiB at 4096 tokens, over the session's element limit long before that. Here a
// thread holds K and V panels and one block of score rows: O(Sk * D). The speed is on par
// (osprey_tile_bench, one layer of 12 heads: 0.92-1.04x of the batched matmuls).
#include <algorithm>
#include <cstring>

#include "kernels/cpu/attention_bf16.h"
#include "kernels/cpu/attention_tiles.h"
#include "kernels/cpu/kept_buffer.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/attention.h"

namespace osprey::cpu {
namespace {

// Work buffers up to this size stay with their thread between calls.
constexpr size_t kKeptWorkBytes = size_t{16} << 20;

}  // namespace

Status attention(KernelContext& ctx) {
  ref::AttentionDims d;
  OSPREY_RETURN_IF_ERROR(ref::attention_dims(ctx, &d));
  OSPREY_ASSIGN_OR_RETURN(
      Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, {d.batch, d.q_len, d.hidden()}));
  if (y.numel() == 0) return Status::Ok();
  if (d.kv_len == 0) {  // an empty softmax row weighs nothing
    std::memset(y.raw_data(), 0, y.nbytes());
    return Status::Ok();
  }
  const int64_t H = d.heads, Sq = d.q_len, Sk = d.kv_len, D = d.head_size, HD = d.hidden();
  const VectorIsa isa = best_vector_isa();
  const int64_t block_rows = attention_block_rows(Sq, Sk, isa);
  const bool bf16 = ctx.attr_string("compute_precision", "") == "bf16";
  if (bf16 && !attention_bf16_available())
    return failed_precondition("attention in bf16 needs a CPU with avx512_bf16");
  // One buffer per thread: K's and V's panels, then a block's scores and 1 / sums (float32);
  // in bf16, pair panels (one 32-bit word per float) and, after the sums, the block's Q rows
  // and e rows as pairs.
  const int64_t ldqp = (D + 1) / 2, lde = (Sk + 1) / 2;
  const int64_t k_floats = bf16 ? pair_panel_words(D, Sk) : panel_floats(D, Sk);
  const int64_t v_floats = bf16 ? pair_panel_words(Sk, D) : panel_floats(Sk, D);
  const int64_t pair_words = bf16 ? block_rows * (ldqp + lde) : 0;
  OSPREY_ASSIGN_OR_RETURN(
      const int64_t work_floats,
      Tensor::checked_numel(DType::kFloat32,
                            {k_floats + v_floats + block_rows * (Sk + 1) + pair_words},
                            ctx.max_elements()));
  const ref::AttentionRows in = ref::attention_rows(ctx, d);
  const float *qd = in.q, *kd = in.k, *vd = in.v;
  const int64_t ldq = in.ldq, ldkv = in.ldkv;
  float* yd = y.data<float>();
  const float* mask = d.has_mask ? ctx.input(3).data<float>() : nullptr;
  // Mask strides over [B, H, Sq, Sk], 0 where the mask broadcasts.
  const auto& m = d.mask;
  const int64_t ms_b = m[0] > 1 ? m[1] * m[2] * m[3] : 0, ms_h = m[1] > 1 ? m[2] * m[3] : 0;
  const int64_t ms_q = m[2] > 1 ? m[3] : 0, ms_k = m[3] > 1 ? 1 : 0;
  auto pairs = [&](int64_t begin, int64_t end) {
    thread_local KeptBuffer work(kKeptWorkBytes);
    float* k_panels = work.get(static_cast<size_t>(work_floats));
    float* v_panels = k_panels + k_floats;
    float* scores = v_panels + v_floats;
    float* inv_sums = scores + block_rows * Sk;
    uint32_t* k_pairs = reinterpret_cast<uint32_t*>(k_panels);
    uint32_t* v_pairs = reinterpret_cast<uint32_t*>(v_panels);
    uint32_t* q_pairs = reinterpret_cast<uint32_t*>(inv_sums + block_rows);
    uint32_t* e_pairs = q_pairs + block_rows * ldqp;
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / H, h = bh % H;
      const float* qh = qd + b * Sq * ldq + h * D;
      const float* kh = kd + b * Sk * ldkv + h * D;
      const float* vh = vd + b * Sk * ldkv + h * D;
      float* yh = yd + b * Sq * HD + h * D;
      if (bf16) {
        pack_pairs_bf16(kh, ldkv, /*transposed=*/true, D, Sk, d.scale, k_pairs);
        pack_pairs_bf16(vh, ldkv, /*transposed=*/false, Sk, D, 1.0f, v_pairs);
      } else {
        pack_panels(kh, ldkv, /*transposed=*/true, D, Sk, d.scale, k_panels);
        pack_panels(vh, ldkv, /*transposed=*/false, Sk, D, 1.0f, v_panels);
      }
      const float* mh = mask ? mask + b * ms_b + h * ms_h : nullptr;
      for (int64_t i0 = 0; i0 < Sq; i0 += block_rows) {
        const int64_t rows = std::min(block_rows, Sq - i0);
        if (bf16) {
          rows_to_pairs_bf16(qh + i0 * ldq, ldq, rows, D, q_pairs, ldqp);
          panel_product_bf16(q_pairs, ldqp, rows, D, k_pairs, Sk, scores, Sk);
        } else {
          panel_product(isa, qh + i0 * ldq, ldq, rows, D, k_panels, Sk, scores, Sk);
        }
        softmax_rows(isa, scores, rows, Sk, mh ? mh + i0 * ms_q : nullptr, ms_q, ms_k, inv_sums);
        if (bf16) {
          rows_to_pairs_bf16(scores, Sk, rows, Sk, e_pairs, lde);
          panel_product_bf16(e_pairs, lde, rows, Sk, v_pairs, D, yh + i0 * HD, HD, inv_sums);
        } else {
          panel_product(isa, scores, Sk, rows, Sk, v_panels, D, yh + i0 * HD, HD, inv_sums);
        }
      }
    }
    work.trim();
  };
  // Per pair: two products of Sq * Sk * D multiply-adds (bf16: at twice the rate), the softmax.
  ctx.parallel_for(d.batch * H, Sq * Sk * ((bf16 ? 1 : 2) * D + 24), pairs);
  return Status::Ok();
}

}  // namespace osprey::cpu
