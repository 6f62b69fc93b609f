// com.osprey Attention (float32), the oracle of the fused multi-head attention that
// engine/passes/attention_fusion.cc creates:
//
//   Attention(Q, K, V, mask?) -> Y      num_heads = H (int), scale (float, default 1/sqrt(D))
//     Q [B, Sq, H*D], K and V [B, Sk, H*D], mask additive, broadcastable to [B, H, Sq, Sk]
//     (numpy rules, rank <= 4, each dim 1 or the full dim), Y [B, Sq, H*D]:
//     for each batch b and head h, with Q_h = Q[b, :, h*D:(h+1)*D] (and K_h, V_h alike):
//       Y[b, :, h*D:(h+1)*D] = softmax_rows(scale * Q_h K_h^T + mask[b, h]) V_h
//   Attention(QKV, "", "", mask?): Q, K and V packed along the last axis of one
//     [B, S, 3*H*D] tensor (Q = QKV[:, :, 0:H*D], K the next H*D, V the last), Y [B, S, H*D]
//     (engine/passes/qkv_projection_merge.cc makes this form).
//
// The softmax is the ONNX one along the last axis (max subtracted, so a row of -inf gives NaN
// as the unfused Softmax does). Plain loops, double accumulation.
#include "kernels/reference/attention.h"

#include <cmath>
#include <vector>

#include "kernels/reference/common.h"

namespace osprey::ref {

Status attention_dims(const KernelContext& ctx, AttentionDims* d) {
  const char* names[] = {"Q", "K", "V"};
  // Q alone: Q, K and V packed side by side along its last axis.
  const bool packed = ctx.has_input(0) && !ctx.has_input(1) && !ctx.has_input(2);
  for (int i = 0; i < (packed ? 1 : 3); ++i) {
    if (!ctx.has_input(i)) return invalid_argument("Attention: input ", names[i], " is required");
    const Tensor& t = ctx.input(i);
    if (t.dtype() != DType::kFloat32)
      return invalid_argument("Attention: ", names[i], " must be float32, got ",
                              dtype_name(t.dtype()));
    if (t.rank() != 3)
      return invalid_argument("Attention: ", names[i],
                              " must be rank 3 [batch, sequence, hidden], got ",
                              shape_to_string(t.shape()));
  }
  const Tensor& q = ctx.input(0);
  if (packed && q.dim(2) % 3 != 0)
    return invalid_argument("Attention: Q ", shape_to_string(q.shape()),
                            " with K and V absent packs Q, K and V, so its last dim must be a "
                            "multiple of 3");
  const Tensor& k = packed ? q : ctx.input(1);
  const Tensor& v = packed ? q : ctx.input(2);
  if (k.shape() != v.shape())
    return invalid_argument("Attention: K ", shape_to_string(k.shape()), " and V ",
                            shape_to_string(v.shape()), " must have one shape");
  if (q.dim(0) != k.dim(0) || q.dim(2) != k.dim(2))
    return invalid_argument("Attention: Q ", shape_to_string(q.shape()), " and K ",
                            shape_to_string(k.shape()), " must agree in batch and hidden size");
  const int64_t hidden = packed ? q.dim(2) / 3 : q.dim(2);
  const int64_t heads = ctx.attr_int("num_heads", 0);
  if (heads < 1 || hidden % heads != 0)
    return invalid_argument("Attention: num_heads ", heads,
                            " must be >= 1 and divide the hidden size ", hidden);
  *d = {};
  d->packed = packed;
  d->batch = q.dim(0);
  d->q_len = q.dim(1);
  d->kv_len = k.dim(1);
  d->heads = heads;
  d->head_size = hidden / heads;
  const float def = d->head_size > 0 ? 1.0f / std::sqrt(static_cast<float>(d->head_size)) : 1.0f;
  d->scale = ctx.attr_float("scale", def);
  if (!std::isfinite(d->scale))
    return invalid_argument("Attention: scale must be finite, got ", d->scale);
  if (ctx.has_input(3)) {
    const Tensor& m = ctx.input(3);
    if (m.dtype() != DType::kFloat32)
      return invalid_argument("Attention: mask must be float32, got ", dtype_name(m.dtype()));
    const std::array<int64_t, 4> full = {d->batch, d->heads, d->q_len, d->kv_len};
    if (m.rank() > 4)
      return invalid_argument("Attention: mask ", shape_to_string(m.shape()),
                              " must have rank <= 4 (broadcastable to [batch, heads, q_len, "
                              "kv_len])");
    const int64_t off = 4 - m.rank();
    for (int64_t i = 0; i < m.rank(); ++i) {
      const int64_t md = m.dim(i), want = full[static_cast<size_t>(off + i)];
      if (md != 1 && md != want)
        return invalid_argument("Attention: mask ", shape_to_string(m.shape()),
                                " is not broadcastable to [", full[0], ",", full[1], ",", full[2],
                                ",", full[3], "] (dim ", i, ")");
      d->mask[static_cast<size_t>(off + i)] = md;
    }
    d->has_mask = true;
  }
  return Status::Ok();
}

AttentionRows attention_rows(const KernelContext& ctx, const AttentionDims& d) {
  AttentionRows r;
  r.q = ctx.input(0).data<float>();
  if (d.packed) {
    r.k = r.q + d.hidden();
    r.v = r.q + 2 * d.hidden();
    r.ldq = r.ldkv = 3 * d.hidden();
  } else {
    r.k = ctx.input(1).data<float>();
    r.v = ctx.input(2).data<float>();
    r.ldq = r.ldkv = d.hidden();
  }
  return r;
}

Status attention(KernelContext& ctx) {
  AttentionDims d;
  OSPREY_RETURN_IF_ERROR(attention_dims(ctx, &d));
  OSPREY_ASSIGN_OR_RETURN(Tensor y,
                          ctx.new_output(0, DType::kFloat32, {d.batch, d.q_len, d.hidden()}));
  if (d.kv_len == 0) return Status::Ok();  // an empty softmax row weighs nothing: Y = 0
  const AttentionRows rows = attention_rows(ctx, d);
  const float *qp = rows.q, *kp = rows.k, *vp = rows.v;
  const int64_t ldq = rows.ldq, ldkv = rows.ldkv;
  const float* mp = d.has_mask ? ctx.input(3).data<float>() : nullptr;
  float* yp = y.data<float>();
  const int64_t hd = d.hidden(), D = d.head_size;
  // Mask strides over [B, H, Sq, Sk]: 0 on broadcast dims.
  std::array<int64_t, 4> ms{};
  for (int64_t i = 3, stride = 1; i >= 0; --i) {
    ms[static_cast<size_t>(i)] = d.mask[static_cast<size_t>(i)] == 1 ? 0 : stride;
    stride *= d.mask[static_cast<size_t>(i)];
  }
  std::vector<double> row(static_cast<size_t>(d.kv_len));
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      for (int64_t i = 0; i < d.q_len; ++i) {
        const float* qi = qp + (b * d.q_len + i) * ldq + h * D;
        double mx = -INFINITY;
        for (int64_t j = 0; j < d.kv_len; ++j) {
          const float* kj = kp + (b * d.kv_len + j) * ldkv + h * D;
          double dot = 0;
          for (int64_t e = 0; e < D; ++e) dot += static_cast<double>(qi[e]) * kj[e];
          double s = static_cast<double>(d.scale) * dot;
          if (mp) s += mp[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
          row[static_cast<size_t>(j)] = s;
          mx = std::max(mx, s);
        }
        double sum = 0;
        for (auto& s : row) sum += (s = std::exp(s - mx));
        float* yi = yp + (b * d.q_len + i) * hd + h * D;
        for (int64_t e = 0; e < D; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < d.kv_len; ++j)
            acc += row[static_cast<size_t>(j)] * vp[(b * d.kv_len + j) * ldkv + h * D + e];
          yi[e] = static_cast<float>(acc / sum);
        }
      }
  return Status::Ok();
}

}  // namespace osprey::ref
