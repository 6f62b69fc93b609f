// ReduceSum, ReduceMean, ReduceMax and ReduceMin, float32, on the vectorized row kernels when
// the reduced axes are one consecutive run (size-1 axes ignored): x is then viewed as
// [outer, r, inner] and summed over r in double (global average pooling of NHWC (axes 1,2), a
// sum over the sequence (axis 1), a mean over the last axis), or its extreme taken bit for bit
// as the reference (a max over the channels of NCHW, over the last axis). Other axis sets, the identity case (noop_with_empty_axes) and empty
// tensors run the reference kernel, which is also the oracle in the tests.
#include <vector>

#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::cpu {
namespace {

// Splits x's shape into [outer, r, inner] around the reduced axes; false when they are not one
// consecutive run once size-1 axes are left out.
bool three_way_view(const Shape& shape, const std::vector<bool>& reduce, int64_t* outer,
                    int64_t* r, int64_t* inner) {
  int state = 0;  // 0: before the reduced run, 1: in it, 2: after it
  *outer = *r = *inner = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (reduce[d]) {
      if (state == 2) return false;
      state = 1;
      *r *= shape[d];
    } else {
      if (state == 1) state = 2;
      (state == 0 ? *outer : *inner) *= shape[d];
    }
  }
  return true;
}

enum class Reduce { kSum, kMean, kMax, kMin };

Status run(KernelContext& ctx, Reduce op, int axes_input_since,
           Status (*reference)(KernelContext&)) {
  if (!ctx.has_input(0)) return reference(ctx);
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32 || x.numel() == 0) return reference(ctx);
  thread_local std::vector<bool> reduce;
  bool noop = false;
  if (!ref::reduce_axes(ctx, axes_input_since, x, &reduce, &noop).ok() || noop)
    return reference(ctx);  // the reference names the bad axes, or returns x as it is
  int64_t outer = 1, r = 1, inner = 1;
  if (!three_way_view(x.shape(), reduce, &outer, &r, &inner)) return reference(ctx);
  const bool keepdims = ctx.attr_int("keepdims", 1) != 0;
  thread_local Shape out_shape;
  out_shape.clear();
  for (size_t d = 0; d < x.shape().size(); ++d) {
    if (!reduce[d])
      out_shape.push_back(x.shape()[d]);
    else if (keepdims)
      out_shape.push_back(1);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kFloat32, out_shape));
  const float* in = x.data<float>();
  float* out = y.data<float>();
  const VectorIsa isa = best_vector_isa();
  if (op == Reduce::kMax || op == Reduce::kMin) {
    const int64_t blocks = column_blocks(inner);
    ctx.parallel_for(outer * blocks, r * (inner == 1 ? 1 : 16), [&](int64_t b, int64_t e) {
      extreme_middle_axis(isa, in, out, r, inner, b, e, op == Reduce::kMin);
    });
    return Status::Ok();
  }
  const double mult = op == Reduce::kMean ? 1.0 / static_cast<double>(r) : 1.0;
  ctx.parallel_for(outer, r * inner, [&](int64_t b, int64_t e) {
    sum_middle_axis(isa, in, out, b, e, r, inner, mult);
  });
  return Status::Ok();
}

}  // namespace

Status reduce_sum(KernelContext& ctx) { return run(ctx, Reduce::kSum, 13, &ref::reduce_sum); }
Status reduce_mean(KernelContext& ctx) { return run(ctx, Reduce::kMean, 18, &ref::reduce_mean); }
Status reduce_max(KernelContext& ctx) { return run(ctx, Reduce::kMax, 18, &ref::reduce_max); }
Status reduce_min(KernelContext& ctx) { return run(ctx, Reduce::kMin, 18, &ref::reduce_min); }

}  // namespace osprey::cpu
