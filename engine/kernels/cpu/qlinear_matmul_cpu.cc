// ONNX QLinearMatMul on the float GEMM: the products a QOperator-quantized transformer's
// attention makes of two computed tensors (qoperator_rewrite puts those with a constant B on
// the int8 matmul instead). A - a_zero_point and B - b_zero_point are integers of at most 255
// in magnitude: in float32 their products (below 2^16) and sums of up to 256 of them (below
// 2^24) are exact, so the float product is the integer one bit for bit. The requantization is
// the reference's, y = saturate(round_half_even(float(acc) * (a_scale * b_scale / y_scale)) +
// y_zero_point): the product's output scale multiplies the exact sum once, and quantize_row
// rounds it with scale 1. Per-tensor scales and zero points, ranks >= 2 and K <= 256; other
// forms run on the reference.
#include <cstring>

#include "kernels/cpu/kept_buffer.h"
#include "kernels/cpu/matmul_core.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"
#include "kernels/reference/qparam.h"

namespace osprey::cpu {
namespace {

constexpr int64_t kMaxExactK = 256;

// One float32 value (a per-tensor scale).
bool one_float(const Tensor& t) { return t.dtype() == DType::kFloat32 && t.numel() == 1 && t.rank() <= 1; }
// One zero point of type `type`.
bool one_byte(const Tensor& t, DType type) { return t.dtype() == type && t.numel() == 1 && t.rank() <= 1; }

// The form this kernel takes (see the file comment).
bool supported(const KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return false;
  for (int i = 0; i < 8; ++i)
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return false;
  const Tensor &A = ctx.input(0), &B = ctx.input(3);
  if (!ref::is_8bit(A.dtype()) || !ref::is_8bit(B.dtype()) || A.rank() < 2 || B.rank() < 2) return false;
  if (!one_float(ctx.input(1)) || !one_float(ctx.input(4)) || !one_float(ctx.input(6))) return false;
  if (!one_byte(ctx.input(2), A.dtype()) || !one_byte(ctx.input(5), B.dtype()) || !ref::is_8bit(ctx.input(7).dtype()) ||
      ctx.input(7).numel() != 1 || ctx.input(7).rank() > 1)
    return false;
  const int64_t K = A.dim(A.rank() - 1);
  return K > 0 && K <= kMaxExactK && B.dim(B.rank() - 2) == K;
}

}  // namespace

Status qlinear_matmul(KernelContext& ctx) {
  auto* st = dynamic_cast<MatMulState*>(ctx.state());
  if (!st || !supported(ctx)) return ref::qlinear_matmul(ctx);
  const Tensor &A = ctx.input(0), &B = ctx.input(3), &yzp = ctx.input(7);
  const int64_t M = A.dim(A.rank() - 2), K = A.dim(A.rank() - 1), N = B.dim(B.rank() - 1);
  const Shape ab(A.shape().begin(), A.shape().end() - 2), bb(B.shape().begin(), B.shape().end() - 2);
  Shape batch;
  if (!ref::broadcast_shapes({ab, bb}, &batch).ok()) return ref::qlinear_matmul(ctx);  // (it names the error)
  Shape out = batch;
  out.push_back(M);
  out.push_back(N);
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output_uninitialized(0, yzp.dtype(), out));
  if (Y.numel() == 0) return Status::Ok();
  // The shifted operands and the scaled sums, in per-thread buffers kept between runs.
  thread_local KeptBuffer a_buf(size_t{4} << 20), b_buf(size_t{4} << 20), y_buf(size_t{4} << 20);
  float* af = a_buf.get(static_cast<size_t>(A.numel()));
  float* bf = b_buf.get(static_cast<size_t>(B.numel()));
  float* yf = y_buf.get(static_cast<size_t>(Y.numel()));
  const VectorIsa isa = best_vector_isa();
  dequantize_row(isa, A.raw_data(), af, A.numel(), 1.0f, ref::byte_at(ctx.input(2), 0), A.dtype() == DType::kInt8);
  dequantize_row(isa, B.raw_data(), bf, B.numel(), 1.0f, ref::byte_at(ctx.input(5), 0), B.dtype() == DType::kInt8);
  Product2D p;
  p.M = M;
  p.K = K;
  p.N = N;
  p.alpha = ctx.input(1).data<float>()[0] * ctx.input(4).data<float>()[0] / ctx.input(6).data<float>()[0];
  std::vector<const float*> ap, bp;
  std::vector<float*> yp;
  const int64_t batches = shape_numel(batch);
  ref::StridedIter it(batch, {ref::broadcast_strides(ab, batch), ref::broadcast_strides(bb, batch)});
  for (int64_t i = 0; i < batches; ++i, it.next()) {
    ap.push_back(af + it.offset(0) * M * K);
    bp.push_back(bf + it.offset(1) * K * N);
    yp.push_back(yf + i * M * N);
  }
  OSPREY_RETURN_IF_ERROR(run_products(*st, p, kernel_threads(ctx), ap, bp, yp));
  quantize_row(isa, yf, Y.raw_data(), Y.numel(), 1.0f, ref::byte_at(yzp, 0), yzp.dtype() == DType::kInt8);
  return Status::Ok();
}

// The product primitives are cached in the node's state (B is computed: nothing to prepack).
Result<std::shared_ptr<KernelState>> prepare_qlinear_matmul(const KernelContext& ctx) {
  OSPREY_ASSIGN_OR_RETURN(auto st, make_matmul_state(ctx, 3));
  return std::shared_ptr<KernelState>(std::move(st));
}

}  // namespace osprey::cpu
