// GroupNormalization (opsets 18, 21) on the vectorized row kernel (group_norm_rows), float32,
// for X of rank >= 2 with float32 scale and bias of one value per group (18) or per channel
// (21); the groups (one row per item and group) split across the session's threads. Every other
// form runs the reference kernel (the tests' oracle), which also names the errors.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey {
namespace ref {
Status group_normalization(KernelContext& ctx);
}  // namespace ref

namespace cpu {

Status group_normalization(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || !ctx.has_attr("num_groups"))
    return ref::group_normalization(ctx);
  const Tensor& x = ctx.input(0);
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (x.dtype() != DType::kFloat32 || x.rank() < 2 || x.numel() == 0 || groups <= 0 || x.dim(1) % groups != 0)
    return ref::group_normalization(ctx);
  const bool per_channel = ctx.opset() >= 21;
  const int64_t params = per_channel ? x.dim(1) : groups;
  for (int i : {1, 2})
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kFloat32 ||
        ctx.input(i).shape() != Shape{params})
      return ref::group_normalization(ctx);
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

}  // namespace cpu
}  // namespace osprey
