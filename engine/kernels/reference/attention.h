// The com.osprey Attention op's shapes, checked once for the reference kernel (attention.cc,
// the oracle) and the fast one (kernels/cpu/attention_cpu.cc).
#pragma once

#include <array>
#include <cstdint>

#include "kernels/kernel.h"

namespace osprey::ref {

struct AttentionDims {
  int64_t batch = 0, q_len = 0, kv_len = 0, heads = 0, head_size = 0;
  float scale = 1.0f;
  bool has_mask = false;
  // The mask's dims right-aligned to [batch, heads, q_len, kv_len] (leading 1s added); each is
  // 1 (broadcast) or the full dim.
  std::array<int64_t, 4> mask{1, 1, 1, 1};
  // Q, K and V packed in input 0 ([B, S, 3*H*D], K and V absent): each row holds Q's H*D
  // values, then K's, then V's (what qkv_projection_merge makes of three projections).
  bool packed = false;
  int64_t hidden() const { return heads * head_size; }
};

// Where Q's, K's and V's first rows start and how many floats apart their rows are (H*D for
// separate tensors, 3*H*D packed).
struct AttentionRows {
  const float *q = nullptr, *k = nullptr, *v = nullptr;
  int64_t ldq = 0, ldkv = 0;
};
AttentionRows attention_rows(const KernelContext& ctx, const AttentionDims& d);

// Checks Q [B, Sq, H*D], K and V [B, Sk, H*D] (or Q alone, packed [B, S, 3*H*D]), the optional
// float32 mask broadcastable to [B, H, Sq, Sk], num_heads (>= 1, dividing H*D) and scale
// (finite; default 1/sqrt(D)). Errors are kInvalidArgument naming the input or attribute.
Status attention_dims(const KernelContext& ctx, AttentionDims* d);

}  // namespace osprey::ref
