// ArgMax and ArgMin over float32 on the middle-axis kernel (row_kernels.h): x viewed as
// [outer, n, inner] around `axis`, column blocks (rows when the axis is the last) across the
// threads, the reference's NaN and tie rules (select_last_index included). A segmentation
// head's per-pixel class ([1, 80, 8400] over axis 1) took the reference's strided scalar loop
// 3x onnxruntime's time. Other types, an empty axis (its error) and axes of 2^31 or more run
// the reference, the oracle of the tests.
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
Status arg_max(KernelContext& ctx);  // reference/reduce.cc
Status arg_min(KernelContext& ctx);
}  // namespace osprey::ref

namespace osprey::cpu {
namespace {

Status run(KernelContext& ctx, bool min, Status (*reference)(KernelContext&)) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kFloat32)
    return reference(ctx);
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = ctx.attr_int("axis", 0);
  if (rank == 0 || axis < -rank || axis >= rank) return reference(ctx);  // its error
  if (axis < 0) axis += rank;
  int64_t outer = 1, n = 1, inner = 1;
  ref::split_at_axis(x.shape(), axis, &outer, &n, &inner);
  Shape out = x.shape();
  if (ctx.attr_int("keepdims", 1) != 0) out[static_cast<size_t>(axis)] = 1;
  else out.erase(out.begin() + axis);
  if (n == 0 || n >= (int64_t{1} << 31)) return reference(ctx);
  const bool last = ctx.attr_int("select_last_index", 0) != 0;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kInt64, out));
  if (y.numel() == 0) return Status::Ok();
  const float* xp = x.data<float>();
  int64_t* yp = y.data<int64_t>();
  const VectorIsa isa = best_vector_isa();
  const int64_t blocks = column_blocks(inner);
  ctx.parallel_for(outer * blocks, n * (inner == 1 ? 2 : 32), [&](int64_t b, int64_t e) {
    arg_extreme_middle_axis(isa, xp, yp, n, inner, b, e, min, last);
  });
  return Status::Ok();
}

}  // namespace

Status arg_max(KernelContext& ctx) { return run(ctx, false, &ref::arg_max); }
Status arg_min(KernelContext& ctx) { return run(ctx, true, &ref::arg_min); }

}  // namespace osprey::cpu
