// CumSum over float32 along an axis that is not the last (a running sum down the rows or
// channels of an image-shaped tensor) on the middle-axis kernel, column blocks across the
// threads, bit for bit the reference's (26x onnxruntime's time on [1, 128, 80, 80] over axis 1:
// one strided column at a time). Sums along the last axis, other types and bad axes run the
// reference, the oracle of the tests.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
Status cum_sum(KernelContext& ctx);  // reference/scan_ops.cc
}  // namespace osprey::ref

namespace osprey::cpu {

Status cum_sum(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1) || !ctx.input_value(0).is_tensor() || !ctx.input_value(1).is_tensor() ||
      ctx.input(0).dtype() != DType::kFloat32 || ctx.input(1).numel() != 1 || ctx.input(1).rank() > 1 ||
      (ctx.input(1).dtype() != DType::kInt64 && ctx.input(1).dtype() != DType::kInt32))
    return ref::cum_sum(ctx);  // and its errors
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.input(1).dtype() == DType::kInt64 ? ctx.input(1).data<int64_t>()[0] : ctx.input(1).data<int32_t>()[0];
  if (rank == 0 || axis < -rank || axis >= rank) return ref::cum_sum(ctx);
  if (axis < 0) axis += rank;
  int64_t outer = 1, n = 1, inner = 1;
  ref::split_at_axis(x.shape(), axis, &outer, &n, &inner);
  if (inner == 1) return ref::cum_sum(ctx);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, x.shape()));
  if (y.numel() == 0) return Status::Ok();
  const bool exclusive = ctx.attr_int("exclusive", 0) != 0, reverse = ctx.attr_int("reverse", 0) != 0;
  const float* xp = x.data<float>();
  float* yp = y.data<float>();
  const VectorIsa isa = best_vector_isa();
  // One contiguous part of the columns per thread: with the pool's usual four chunks a thread,
  // handed out first come first served, 2 threads took twice 1 thread's time on [1, 128, 80, 80]
  // (0.33 against 0.17 ms; the halves, 0.12).
  const int64_t blocks = outer * column_blocks(inner);
  const int64_t parts = ctx.pool() ? ctx.pool()->num_threads() : 1;
  ctx.parallel_for(parts, blocks * n * 16, [&](int64_t b, int64_t e) {
    cumsum_middle_axis(isa, xp, yp, n, inner, b * blocks / parts, e * blocks / parts, exclusive, reverse);
  });
  return Status::Ok();
}

}  // namespace osprey::cpu
