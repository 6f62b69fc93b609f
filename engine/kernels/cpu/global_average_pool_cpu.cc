// GlobalAveragePool, float32 [N, C, spatial...]: each plane's mean, summed in double lanes by
// the row kernel sum_middle_axis (planes across the threads), where the reference sums one
// element at a time (2.7x onnxruntime's time on [1, 512, 20, 20]). Other types and ranks
// below 3 run the reference, its oracle in the tests (within a float rounding: the sums' order
// differs).
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey::ref {
Status global_average_pool(KernelContext& ctx);  // reference/pool.cc
}  // namespace osprey::ref

namespace osprey::cpu {

Status global_average_pool(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kFloat32 ||
      ctx.input(0).rank() < 3 || ctx.input(0).numel() == 0)
    return ref::global_average_pool(ctx);  // and its errors (an empty spatial dim)
  const Tensor& x = ctx.input(0);
  Shape out = x.shape();
  for (size_t d = 2; d < out.size(); ++d) out[d] = 1;
  const int64_t planes = x.dim(0) * x.dim(1), r = x.numel() / planes;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, out));
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const VectorIsa isa = best_vector_isa();
  ctx.parallel_for(planes, r, [&](int64_t b, int64_t e) {
    sum_middle_axis(isa, xp, yp, b, e, r, 1, 1.0 / static_cast<double>(r));
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
