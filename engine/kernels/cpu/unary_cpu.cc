// Sigmoid, Tanh, Exp, Gelu (ours and ONNX's), LeakyRelu, Sqrt, Erf, HardSigmoid, HardSwish, Abs,
// Neg, Reciprocal, Log, Softplus, Mish, Elu, Floor, Ceil, Round and Pow by a scalar (float32) on
// the vectorized row kernels (row_kernels.h), split across the session's threads (Tanh's and
// Exp's references, std::tanh and std::exp per element, ran 800K floats in 13.1 and 2.5 ms against onnxruntime's 0.22 and
// 0.15): PP-OCR's text detector ends in a Sigmoid over its 640x640 map,
// which the reference (std::exp per element) took 1.5 ms for; a dynamically quantized
// transformer keeps its Gelus apart from the products (MatMulInteger takes no activation),
// where the reference's std::erf loop took half of MiniLM's time. The reference's loops took
// 4.0 ms (LeakyRelu: a branch per element), 7.5 ms (Sqrt: errno) and 5.4 ms (Erf) on 800K
// floats, against onnxruntime's 0.13, 0.31 and 0.28. The reference is the oracle of the tests.
#include <bit>
#include <cmath>
#include <cstdint>

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

// Pow of a float32 base by one exponent value (any numeric type; no broadcast beyond the base's
// shape): the reference's bits, which round std::pow in double to float. Squares are x * x
// (the double product is exact, so its rounding is the float product's); square roots are the
// vectorized square root, which the double result of std::pow(x, 0.5) also rounds to (a float
// square root is never within 2^-49 of a rounding boundary; a negative x gives the default NaN
// both ways), with the lanes where the two part (-0, -inf, NaN) taken from std::pow; other
// exponents run std::pow per element, split across the threads. A [1, 128, 80, 80] x^0.5 took
// 10.5 ms on the reference (onnxruntime 6.3).
Status pow(KernelContext& ctx) {
  if (!float_input(ctx) || ctx.opset() < 7 || !ctx.has_input(1) || !ctx.input_value(1).is_tensor())
    return ref::binary_pow(ctx);
  const Tensor& ex = ctx.input(1);
  if (ex.numel() != 1 || ex.rank() > ctx.input(0).rank() || ex.dtype() == DType::kString || ex.dtype() == DType::kBool ||
      (ctx.opset() < 12 && ex.dtype() != DType::kFloat32))
    return ref::binary_pow(ctx);  // a broadcast that changes the shape, or the reference's errors
  const double e = ex.get_as_double(0);
  if (e == 2.0)
    return map_chunks(ctx, [](VectorIsa isa, const float* x, float* y, int64_t n) {
      binary_row(isa, BinaryOp::kMul, x, true, x, true, y, n);
    });
  if (e == 0.5)
    return map_chunks(ctx, [](VectorIsa isa, const float* x, float* y, int64_t n) {
      unary_row(isa, UnaryOp::kSqrt, x, y, n);
      // A negative x gives the default NaN either way; -0 (+0 from std::pow), -inf (+inf) and
      // NaN take std::pow's result.
      for (int64_t k = 0; k < n; ++k) {
        const uint32_t bits = std::bit_cast<uint32_t>(x[k]);
        if (bits == 0x80000000u || bits == 0xff800000u || (bits & 0x7fffffffu) > 0x7f800000u)
          y[k] = static_cast<float>(std::pow(static_cast<double>(x[k]), 0.5));
      }
    });
  return map_chunks(ctx, [e](VectorIsa, const float* x, float* y, int64_t n) {
    for (int64_t k = 0; k < n; ++k) y[k] = static_cast<float>(std::pow(static_cast<double>(x[k]), e));
  });
}

}  // namespace osprey::cpu
