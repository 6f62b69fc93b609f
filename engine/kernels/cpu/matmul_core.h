// One 2-D matrix product on oneDNN's matmul primitive, shared by MatMul, Gemm and
// FusedMatMul: Y[M,N] = alpha * op(A) op(B) (+ bias[N]) (+ beta * Y as it was) then the
// activation. A float32 constant B on AVX-512, with no activation but Gelu (which runs after
// the product), runs on panel_product instead. With a constant B where oneDNN's matmul is gemm-based (CPUs without AVX-512), or
// in bf16 on AMX, the product runs as a 1x1 convolution over M pixels instead, on B packed once
// in the convolution's blocked layout (matmul_core.cc says why). The primitive per problem
// shape is cached in the node's state; a constant B is
// reordered once into the layout the primitive prefers. In bf16 compute (the node's
// compute_precision = "bf16") A and a computed B are converted to bf16 per run, a constant B
// once; accumulation and Y stay f32, unless the product says A is stored bf16 already (no
// conversion) or Y is to be written bf16 (FusedMatMul's bf16_input / bf16_output).
#pragma once

#include <memory>
#include <vector>

#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/panel_product.h"

namespace osprey::cpu {

struct Product2D {
  int64_t M = 0, K = 0, N = 0;
  bool trans_a = false, trans_b = false;  // A stored [K,M] / B stored [N,K]
  bool has_bias = false;                  // add bias[N] (a row broadcast over M)
  float alpha = 1.0f;
  float beta = 0.0f;  // != 0: Y holds C on entry and gets alpha*AB + beta*C (sum post-op)
  // bf16 compute only: A is stored bfloat16 (not transposed); Y is written bfloat16 (beta 0).
  bool a_bf16 = false, y_bf16 = false;
};

struct MatMulEntry;

struct MatMulState final : KernelState {
  Activation act;
  bool bf16 = false;  // bf16 operands, f32 accumulation
  bool a_bf16 = false, y_bf16 = false;  // FusedMatMul's bf16_input / bf16_output (read_bf16_io)
  int b_index = 1;    // the node's input that is B
  // Constant B (shared storage) until the session releases its plain copy; undefined when B is
  // computed. weights_data identifies it among the node's B inputs at run time.
  Tensor weights;
  const void* weights_data = nullptr;
  bool weights_released = false;  // only `packed` holds B now
  ShapeCache<MatMulEntry> cache;
  // Constant B reordered into each layout a primitive asked for (under cache's lock). The
  // first is made at load (prepack_weights); a later layout is reordered from the plain B, or
  // from the first packed form once the plain B is released.
  std::vector<std::pair<dnnl::memory::desc, dnnl::memory>> packed;
  std::vector<std::shared_ptr<void>> packed_storage;  // what `packed`'s memories live in
  // When a primitive takes B in its plain layout, its "packed" form is the plain B itself:
  // this keeps that storage alive after the session releases its copy.
  Tensor plain_held;
  // Whether a constant B is packed as a 1x1 convolution's weights (and its products run as
  // that convolution): -1 until the first packable product decides, then 0 or 1.
  int packed_as_conv = -1;
  // A float32 constant B packed for panel_product (AVX-512, see panel_form): every product
  // with this B runs there, and `packed` stays empty.
  PanelB panel;
  bool allow_panel = true;  // false holds the state to oneDNN (benchmarks comparing the two)

  bool holds_constant(int input) const override {
    return input == b_index && (!packed.empty() || panel.data != nullptr);
  }
  void constant_released(int input) override {
    if (input != b_index) return;
    weights = Tensor();
    weights_released = true;
  }
};

// Whether the state's activation runs after the product, as gelu_fast_inplace over Y, rather
// than as oneDNN's eltwise post-op: a Gelu (either form, no affine). oneDNN 2.6's gelu_erf
// post-op (an exp and a division per element) took 0.33 ms of a 128x768x3072 bf16 product's
// 0.86 ms on AMX, and 0.25 ms of the float32 one's 3.72 ms; the separate pass 0.13 / 0.11 ms
// (inside BERT-base, float32: 4.50 -> 4.37 ms per feed-forward product).
bool gelu_after_product(const MatMulState& st);

// The prepared state for a node whose B is input `b_index` (constant or not); fails on a bad
// compute_precision attribute.
Result<std::shared_ptr<MatMulState>> make_matmul_state(const KernelContext& ctx, int b_index);

// Reorders a constant 2-D B (stored transposed when `trans_b`) into the layout the product
// primitive asks for, at load, so that the first run does not pay for it and the session can
// free the plain copy. No-op when B is not constant.
Status prepack_weights(MatMulState& st, bool trans_b, int threads);

// Runs the product. `b` is the node's B input; it is used in its prepacked form when it is
// the state's constant weights. `a`, `b`, `bias`, `y` are float32 data in the layouts `p`
// describes (`a` and `y` bfloat16 where p.a_bf16 / p.y_bf16 say so). A problem with M, N or
// K == 0 must be handled by the caller.
Status run_product(MatMulState& st, const Product2D& p, int threads, const Tensor& b_tensor,
                   const void* a, const float* b, const float* bias, void* y);

// Same, for many problems that share the shape `p`: runs (a[i], b[i], y[i]) in turn.
Status run_products(MatMulState& st, const Product2D& p, int threads,
                    const std::vector<const float*>& a, const std::vector<const float*>& b,
                    const std::vector<float*>& y);

}  // namespace osprey::cpu
