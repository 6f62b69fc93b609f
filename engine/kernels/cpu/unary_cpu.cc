// Sigmoid, Tanh, Exp, Gelu (ours and ONNX's), LeakyRelu, Sqrt, Erf, HardSigmoid, HardSwish, Abs,
// Neg, Reciprocal, Log, Softplus, Mish, Elu, Floor, Ceil and Round (float32) on the vectorized row kernels
// (row_kernels.h), split across the session's threads (Tanh's and Exp's references, std::tanh
// and std::exp per element, ran 800K floats in 13.1 and 2.5 ms against onnxruntime's 0.22 and
// 0.15): PP-OCR's text detector ends in a Sigmoid over its 640x640 map,
// which the reference (std::exp per element) took 1.5 ms for; a dynamically quantized
// transformer keeps its Gelus apart from the products (MatMulInteger takes no activation),
// where the reference's std::erf loop took half of MiniLM's time. The reference's loops took
// 4.0 ms (LeakyRelu: a branch per element), 7.5 ms (Sqrt: errno) and 5.4 ms (Erf) on 800K
// floats, against onnxruntime's 0.13, 0.31 and 0.28. The reference is the oracle of the tests.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/elementwise_util.h"

namespace osprey::cpu {

namespace {

// y = fn(x's elements) over chunks split across the session's threads.
template <class Fn>
Status map_chunks(KernelContext& ctx, Fn&& fn) {
  const Tensor& x = ctx.input(0);
  // Element by element, so y may take over x's bytes when nothing reads x later.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
  constexpr int64_t kChunk = 4096;  // elements per task
  const int64_t n = x.numel(), chunks = (n + kChunk - 1) / kChunk;
  const VectorIsa isa = best_vector_isa();
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  ctx.parallel_for(chunks, kChunk * 8, [&](int64_t b, int64_t e) {
    const int64_t first = b * kChunk, last = std::min(n, e * kChunk);
    fn(isa, xp + first, yp + first, last - first);
  });
  return Status::Ok();
}

bool float_input(const KernelContext& ctx) {
  return ctx.has_input(0) && ctx.input_value(0).is_tensor() && ctx.input(0).dtype() == DType::kFloat32;
}

}  // namespace

Status sigmoid(KernelContext& ctx) {
  if (!float_input(ctx)) return ref::unary_sigmoid(ctx);  // its errors
  return map_chunks(ctx, [](VectorIsa isa, const float* x, float* y, int64_t n) { sigmoid(isa, x, y, n); });
}

Status tanh(KernelContext& ctx) {
  if (!float_input(ctx)) return ref::unary_tanh(ctx);  // its errors
  return map_chunks(ctx, [](VectorIsa isa, const float* x, float* y, int64_t n) { tanh_row(isa, x, y, n); });
}

Status exp(KernelContext& ctx) {
  if (!float_input(ctx)) return ref::unary_exp(ctx);
  return map_chunks(ctx, [](VectorIsa isa, const float* x, float* y, int64_t n) { exp_row(isa, x, y, n); });
}

Status gelu(KernelContext& ctx) {
  const std::string approx = ctx.attr_string("approximate", "none");
  if (!float_input(ctx) || (approx != "none" && approx != "tanh")) return ref::gelu(ctx);  // its errors
  const bool tanh_form = approx == "tanh";
  return map_chunks(ctx, [tanh_form](VectorIsa isa, const float* x, float* y, int64_t n) {
    gelu(isa, x, y, n, tanh_form);
  });
}

namespace {

Status unary(KernelContext& ctx, UnaryOp op, Status (*reference)(KernelContext&), float alpha = 0,
             float beta = 0) {
  if (!float_input(ctx)) return reference(ctx);  // its errors
  return map_chunks(ctx, [op, alpha, beta](VectorIsa isa, const float* x, float* y, int64_t n) {
    unary_row(isa, op, x, y, n, alpha, beta);
  });
}

}  // namespace

Status leaky_relu(KernelContext& ctx) {
  return unary(ctx, UnaryOp::kLeakyRelu, &ref::unary_leaky_relu, ctx.attr_float("alpha", 0.01f));
}
Status sqrt(KernelContext& ctx) { return unary(ctx, UnaryOp::kSqrt, &ref::unary_sqrt); }
Status erf(KernelContext& ctx) { return unary(ctx, UnaryOp::kErf, &ref::unary_erf); }
Status hard_sigmoid(KernelContext& ctx) {
  return unary(ctx, UnaryOp::kHardSigmoid, &ref::unary_hard_sigmoid, ctx.attr_float("alpha", 0.2f),
               ctx.attr_float("beta", 0.5f));
}
Status hardswish(KernelContext& ctx) { return unary(ctx, UnaryOp::kHardSwish, &ref::unary_hardswish); }
Status abs(KernelContext& ctx) { return unary(ctx, UnaryOp::kAbs, &ref::unary_abs); }
Status neg(KernelContext& ctx) { return unary(ctx, UnaryOp::kNeg, &ref::unary_neg); }
Status reciprocal(KernelContext& ctx) { return unary(ctx, UnaryOp::kReciprocal, &ref::unary_reciprocal); }
Status log(KernelContext& ctx) { return unary(ctx, UnaryOp::kLog, &ref::unary_log); }
Status softplus(KernelContext& ctx) { return unary(ctx, UnaryOp::kSoftplus, &ref::unary_softplus); }
Status mish(KernelContext& ctx) { return unary(ctx, UnaryOp::kMish, &ref::unary_mish); }
Status floor(KernelContext& ctx) { return unary(ctx, UnaryOp::kFloor, &ref::unary_floor); }
Status ceil(KernelContext& ctx) { return unary(ctx, UnaryOp::kCeil, &ref::unary_ceil); }
Status round(KernelContext& ctx) { return unary(ctx, UnaryOp::kRound, &ref::unary_round); }
Status elu(KernelContext& ctx) { return unary(ctx, UnaryOp::kElu, &ref::unary_elu, ctx.attr_float("alpha", 1.0f)); }

}  // namespace osprey::cpu
