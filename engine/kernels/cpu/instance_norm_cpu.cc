// InstanceNormalization on the vectorized row kernel (instance_norm_rows), float32, for X of
// rank >= 2 with float32 scale and B of one value per channel; the planes (one per item and
// channel) split across the session's threads. Every other form runs the reference kernel (the
// tests' oracle). Why: the reference's double loops ran a [1, 64, 128, 128] InstanceNorm at
// 6.3x onnxruntime's time (2.04 against 0.32 ms, one thread); exporters also write GroupNorm as
// Reshape + InstanceNormalization + Reshape.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey {
namespace ref {
Status instance_normalization(KernelContext& ctx);
}  // namespace ref

namespace cpu {

Status instance_normalization(KernelContext& ctx) {
  const auto per_channel = [&](int i, int64_t c) {
    return ctx.has_input(i) && ctx.input_value(i).is_tensor() && ctx.input(i).dtype() == DType::kFloat32 &&
           ctx.input(i).shape() == Shape{c};
  };
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor()) return ref::instance_normalization(ctx);
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32 || x.rank() < 2 || x.numel() == 0 || !per_channel(1, x.dim(1)) ||
      !per_channel(2, x.dim(1)))
    return ref::instance_normalization(ctx);
  const int64_t channels = x.dim(1), rows = x.dim(0) * channels, m = x.numel() / rows;
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  // Plane by plane (each is read in full before it is written): y may take over x's bytes.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const VectorIsa isa = best_vector_isa();
  ctx.parallel_for(rows, 6 * m, [&](int64_t b, int64_t e) {
    instance_norm_rows(isa, in + b * m, out + b * m, e - b, m, scale, bias, channels, b, eps);
  });
  return Status::Ok();
}

}  // namespace cpu
}  // namespace osprey
