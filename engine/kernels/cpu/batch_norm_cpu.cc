// BatchNormalization in inference (opset 9 on, no training outputs; float32 X and float32 1-D
// parameters of C values) as the reference computes it, y = a x + b per channel with
// a = scale / sqrt(var + epsilon) and b = B - a mean (taken in double, rounded to float), on the
// unary row kernel's affine map, planes across the threads. A standalone BatchNormalization
// (one not folded into a convolution: after an Add, on a model's input) ran the reference's
// double loop, 2.8x onnxruntime's time on [1, 64, 80, 80]. Other forms (training, opsets before
// 9 with their per-feature `spatial` = 0, other types) run the reference, its oracle in the tests.
#include <cmath>
#include <vector>

#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey::ref {
Status batch_normalization(KernelContext& ctx);  // reference/normalization.cc
}  // namespace osprey::ref

namespace osprey::cpu {
namespace {

// Input i as C float32 values, or null.
const float* channel_param(const KernelContext& ctx, int i, int64_t c) {
  if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return nullptr;
  const Tensor& t = ctx.input(i);
  return t.dtype() == DType::kFloat32 && t.rank() == 1 && t.dim(0) == c ? t.data<float>() : nullptr;
}

}  // namespace

Status batch_normalization(KernelContext& ctx) {
  const bool training = ctx.opset() >= 14 ? ctx.attr_int("training_mode", 0) != 0
                                          : ctx.output_requested(1) || ctx.output_requested(2) ||
                                                ctx.output_requested(3) || ctx.output_requested(4);
  if (ctx.opset() < 9 || training || ctx.output_requested(1) || ctx.output_requested(2) ||
      ctx.num_inputs() != 5 || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      ctx.input(0).dtype() != DType::kFloat32 || ctx.input(0).rank() < 2)
    return ref::batch_normalization(ctx);  // and its errors
  const Tensor& x = ctx.input(0);
  const int64_t n = x.dim(0), c = x.dim(1), s = c > 0 && n > 0 ? x.numel() / (n * c) : 0;
  const float* scale = channel_param(ctx, 1, c);
  const float* bias = channel_param(ctx, 2, c);
  const float* mean = channel_param(ctx, 3, c);
  const float* var = channel_param(ctx, 4, c);
  if (!scale || !bias || !mean || !var) return ref::batch_normalization(ctx);
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  thread_local std::vector<float> a, b;
  a.resize(static_cast<size_t>(c));
  b.resize(static_cast<size_t>(c));
  for (int64_t k = 0; k < c; ++k) {
    const double ak = static_cast<double>(scale[k]) / std::sqrt(static_cast<double>(var[k]) + eps);
    a[static_cast<size_t>(k)] = static_cast<float>(ak);
    b[static_cast<size_t>(k)] = static_cast<float>(static_cast<double>(bias[k]) - ak * static_cast<double>(mean[k]));
  }
  // Element by element, so y may take over x's bytes when nothing reads x later.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
  if (x.numel() == 0) return Status::Ok();
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const float* ap = a.data();
  const float* bp = b.data();
  if (s == 1) {  // [N, C]: rows of C, the parameters along them
    ctx.parallel_for(n, c * 2, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t k = 0; k < c; ++k) yp[r * c + k] = xp[r * c + k] * ap[k] + bp[k];
    });
    return Status::Ok();
  }
  const VectorIsa isa = best_vector_isa();
  ctx.parallel_for(n * c, s * 2, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      unary_row(isa, UnaryOp::kAffine, xp + p * s, yp + p * s, s, ap[p % c], bp[p % c]);
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
