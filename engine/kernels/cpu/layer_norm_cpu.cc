// LayerNormalization (ONNX-17 and com.osprey) on the vectorized row kernel, float32, for the
// common form: Scale and B float32 with the normalized shape's element count (per-element
// parameters), output Y only, stash_type float. Every other form (broadcast parameters, the Mean
// and InvStdDev outputs, another stash type, empty tensors) runs the reference kernel, which is
// also the oracle in the tests. Rows are split over the session's threads.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::cpu {
namespace {

// True when `t` is a float32 tensor holding one value per element of the normalized shape
// (the trailing dims of x from `axis`).
bool per_element_param(const Tensor& t, const Shape& x_shape, int64_t axis, int64_t m) {
  if (t.dtype() != DType::kFloat32 || t.numel() != m) return false;
  const int64_t norm_rank = static_cast<int64_t>(x_shape.size()) - axis;
  if (t.rank() > norm_rank) return false;
  for (int64_t d = 0; d < t.rank(); ++d)
    if (t.dim(t.rank() - 1 - d) != x_shape[x_shape.size() - 1 - static_cast<size_t>(d)]) return false;
  return true;
}

Status run(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return ref::layer_normalization(ctx);
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  if (x.dtype() != DType::kFloat32 || x.numel() == 0 ||
      !ref::normalize_axis(ctx.attr_int("axis", -1), x.rank(), &axis).ok() ||
      ctx.attr_int("stash_type", 1) != 1 || ctx.output_requested(1) || ctx.output_requested(2))
    return ref::layer_normalization(ctx);
  int64_t m = 1;
  for (int64_t d = axis; d < x.rank(); ++d) m *= x.dim(d);
  const Tensor& scale = ctx.input(1);
  if (!per_element_param(scale, x.shape(), axis, m)) return ref::layer_normalization(ctx);
  const float* bias = nullptr;
  if (ctx.has_input(2)) {
    if (!per_element_param(ctx.input(2), x.shape(), axis, m)) return ref::layer_normalization(ctx);
    bias = ctx.input(2).data<float>();
  }
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  // Row by row (layer_norm_rows reads a row before writing it): y may take over x's bytes.
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_over_input(0, 0, DType::kFloat32, x.shape()));
  const int64_t rows = x.numel() / m;
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const float* sc = scale.data<float>();
  const VectorIsa isa = best_vector_isa();
  auto rows_fn = [&](int64_t b, int64_t e) {
    layer_norm_rows(isa, in + b * m, out + b * m, e - b, m, sc, bias, eps);
  };
  if (ctx.pool())
    ctx.pool()->parallel_for(rows, 6 * m, rows_fn);
  else
    rows_fn(0, rows);
  return Status::Ok();
}

}  // namespace

Status layer_normalization(KernelContext& ctx) { return run(ctx); }

// com.osprey LayerNormalization: the ONNX-17 op with output Y only and float32 X, Scale, B.
Status fused_layer_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(ref::check_fused_layer_norm(ctx));
  return run(ctx);
}

}  // namespace osprey::cpu
