// Slicing kernels: Slice, Compress, ReverseSequence.
#include <limits>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

using namespace tensor_ops;  // NOLINT

namespace {
constexpr int64_t kAnyRank = std::numeric_limits<int64_t>::max();
}  // namespace

Status slice(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false, have_steps = false;
  if (ctx.opset() < 10) {
    if (!ctx.has_attr("starts") || !ctx.has_attr("ends"))
      return invalid_argument("attributes 'starts' and 'ends' are required");
    starts = ctx.attr_ints("starts");
    ends = ctx.attr_ints("ends");
    have_axes = ctx.has_attr("axes");
    axes = ctx.attr_ints("axes");
  } else {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "starts", &starts));
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 2, "ends", &ends));
    if (ctx.has_input(3)) {
      have_axes = true;
      OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 3, "axes", &axes));
    }
    if (ctx.has_input(4)) {
      have_steps = true;
      OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 4, "steps", &steps));
    }
  }
  const size_t n = starts.size();
  if (ends.size() != n)
    return invalid_argument("'starts' has ", n, " entries but 'ends' has ", ends.size());
  if (!have_axes)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (!have_steps) steps.assign(n, 1);
  if (axes.size() != n) return invalid_argument("'axes' has ", axes.size(), " entries, expected ", n);
  if (steps.size() != n)
    return invalid_argument("'steps' has ", steps.size(), " entries, expected ", n);
  OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, r));

  Shape out = x.shape();
  const auto in_strides = strides_of(x.shape());
  std::vector<int64_t> strides = in_strides;
  int64_t base = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t a = static_cast<size_t>(axes[i]);
    const int64_t dim = x.shape()[a], step = steps[i];
    if (step == 0) return invalid_argument("'steps' must not be zero");
    int64_t start = starts[i], end = ends[i];
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    int64_t len = 0;
    if (dim == 0) {
      start = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      if (end > start) len = (end - start - 1) / step + 1;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      // -step cannot overflow to a useful length: |step| >= 2^63 gives len <= 1 anyway.
      if (start > end)
        len = step == std::numeric_limits<int64_t>::min() ? 1 : (start - end - 1) / -step + 1;
    }
    out[a] = len;
    strides[a] = in_strides[a] * (len > 1 ? step : 1);
    if (len > 0) base += start * in_strides[a];
  }
  // Every element is written below (strings too: assigned over their empty defaults).
  OSPREY_ASSIGN_OR_RETURN(Tensor y, x.dtype() == DType::kString ? ctx.new_output(0, x.dtype(), out)
                                                                : ctx.new_output_uninitialized(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  return dispatch_elem(x.dtype(), "Slice", [&]<class E>() {
    copy_strided<E>(y.raw_data(), x.raw_data(), base, out, strides);
    return Status::Ok();
  });
}

Status compress(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& cond = ctx.input(1);
  if (cond.dtype() != DType::kBool)
    return invalid_argument("input 'condition' must be bool, got ", dtype_name(cond.dtype()));
  const bool has_axis = ctx.has_attr("axis");
  int64_t axis = 0;
  if (has_axis) OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), x.rank(), &axis));
  // Without an axis the input is flattened.
  const Shape shape = has_axis ? x.shape() : Shape{x.numel()};
  const int64_t dim = shape[static_cast<size_t>(axis)];
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < cond.numel(); ++i) {
    if (!cond.data<bool>()[i]) continue;
    if (i >= dim)
      return invalid_argument("input 'condition' selects index ", i, " beyond the axis size ", dim);
    kept.push_back(i);
  }
  Shape out = shape;
  out[static_cast<size_t>(axis)] = static_cast<int64_t>(kept.size());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  const int64_t outer = dims_product(shape, 0, static_cast<size_t>(axis));
  const int64_t inner = dims_product(shape, static_cast<size_t>(axis) + 1, shape.size());
  return dispatch_elem(x.dtype(), "Compress", [&]<class E>() {
    int64_t o = 0;
    for (int64_t b = 0; b < outer; ++b)
      for (int64_t k : kept) {
        E::copy_n(y.raw_data(), o, x.raw_data(), (b * dim + k) * inner, inner);
        o += inner;
      }
    return Status::Ok();
  });
}

Status reverse_sequence(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, kAnyRank));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, 1));
  const Tensor& x = ctx.input(0);
  const Tensor& lens = ctx.input(1);
  if (lens.dtype() != DType::kInt64)
    return invalid_argument("input 'sequence_lens' must be int64, got ", dtype_name(lens.dtype()));
  const int64_t batch_axis = ctx.attr_int("batch_axis", 1);
  const int64_t time_axis = ctx.attr_int("time_axis", 0);
  if ((batch_axis != 0 && batch_axis != 1) || (time_axis != 0 && time_axis != 1) ||
      batch_axis == time_axis)
    return invalid_argument("attributes 'batch_axis' and 'time_axis' must be 0 and 1 in some order");
  const int64_t batch = x.dim(batch_axis), steps = x.dim(time_axis);
  if (lens.numel() != batch)
    return invalid_argument("input 'sequence_lens' has ", lens.numel(), " entries for batch size ",
                            batch);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t l = lens.data<int64_t>()[b];
    if (l < 0 || l > steps)
      return invalid_argument("sequence length ", l, " at batch ", b, " is outside [0, ", steps, "]");
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  const int64_t inner = dims_product(x.shape(), 2, x.shape().size());
  const int64_t batch_stride = (batch_axis == 0 ? steps : 1) * inner;
  const int64_t time_stride = (time_axis == 0 ? batch : 1) * inner;
  return dispatch_elem(x.dtype(), "ReverseSequence", [&]<class E>() {
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t l = lens.data<int64_t>()[b];
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t src_t = t < l ? l - 1 - t : t;
        E::copy_n(y.raw_data(), b * batch_stride + t * time_stride, x.raw_data(),
                  b * batch_stride + src_t * time_stride, inner);
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
