// InstanceNormalization and GroupNormalization (opsets 18, 21) on the vectorized row kernel
// (group_norm_rows), float32, for X of rank >= 2 with float32 scale and bias of one value per
// channel (InstanceNormalization, GroupNormalization-21) or per group (GroupNormalization-18):
// the rows (one per item and group; a group is one channel for InstanceNormalization) split
// across the session's threads. Every other form runs the reference kernel (the tests' oracle),
// which also names the errors. Why: the reference's double loops ran a [1, 64, 128, 128]
// InstanceNorm at 6.3x onnxruntime's time (2.04 against 0.32 ms, one thread), and a
// [1, 256, 64, 64] GroupNorm of 32 groups at about 5 ms (onnxruntime 1.6); exporters before
// opset 18 write GroupNorm as Reshape + InstanceNormalization + Reshape.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey {
namespace ref {
Status instance_normalization(KernelContext& ctx);
Status group_normalization(KernelContext& ctx);
}  // namespace ref

namespace cpu {
namespace {

// `groups` groups of the channels, scale and bias (inputs 1 and 2) of `params` values each
// (the channels, or the groups); other forms go to `reference`.
Status run_groups(KernelContext& ctx, int64_t groups, bool per_channel, Status (*reference)(KernelContext&)) {
  const Tensor& x = ctx.input(0);
  const int64_t params = per_channel ? x.dim(1) : groups;
  for (int i : {1, 2})
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32 ||
        ctx.input(i).shape() != Shape{params})
      return reference(ctx);
  const int64_t cg = x.dim(1) / groups, rows = x.dim(0) * groups, len = x.numel() / rows, m = len / cg;
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  // Group by group (each is read in full before it is written): y may take over x's bytes.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const VectorIsa isa = best_vector_isa();
  ctx.parallel_for(rows, 6 * len, [&](int64_t b, int64_t e) {
    group_norm_rows(isa, in + b * len, out + b * len, e - b, cg, m, scale, bias, per_channel, groups, b, eps);
  });
  return Status::Ok();
}

bool float_rank2(const KernelContext& ctx) {
  return ctx.has_input(0) && ctx.input_value(0).is_tensor() && ctx.input(0).dtype() == DType::kFloat32 &&
         ctx.input(0).rank() >= 2 && ctx.input(0).numel() > 0;
}

}  // namespace

Status instance_normalization(KernelContext& ctx) {
  if (!float_rank2(ctx)) return ref::instance_normalization(ctx);
  return run_groups(ctx, ctx.input(0).dim(1), true, &ref::instance_normalization);
}

Status group_normalization(KernelContext& ctx) {
  if (!float_rank2(ctx) || !ctx.has_attr("num_groups")) return ref::group_normalization(ctx);
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups <= 0 || ctx.input(0).dim(1) % groups != 0) return ref::group_normalization(ctx);
  return run_groups(ctx, groups, ctx.opset() >= 21, &ref::group_normalization);
}

}  // namespace cpu
}  // namespace osprey
