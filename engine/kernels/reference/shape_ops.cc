// Shape kernels: Reshape, Flatten, Squeeze, Unsqueeze, Shape, Size, Expand,
// ConstantOfShape, Constant, EyeLike, Range.
#include <cmath>
#include <limits>

#include "kernels/reference/common.h"
#include "kernels/reference/tensor_ops_util.h"

namespace osprey::ref {

using namespace tensor_ops;  // NOLINT

namespace {
constexpr int64_t kAnyRank = std::numeric_limits<int64_t>::max();

// Shape from Reshape's target: 0 copies the input dim (unless allowzero), -1 is inferred.
Status reshape_target(const Shape& in, const std::vector<int64_t>& target, bool allowzero,
                      Shape* out) {
  Shape s(target.size());
  int64_t infer = -1, known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < target.size(); ++i) {
    int64_t d = target[i];
    if (d == -1) {
      if (infer >= 0) return invalid_argument("shape has more than one -1");
      infer = static_cast<int64_t>(i);
      continue;
    }
    if (d < -1) return invalid_argument("shape has invalid dimension ", d);
    if (d == 0) {
      has_zero = true;
      if (!allowzero) {
        if (i >= in.size())
          return invalid_argument("shape has 0 at position ", i, " but the input has rank ",
                                  in.size());
        d = in[i];
      }
    }
    s[i] = d;
    if (d != 0 && known > std::numeric_limits<int64_t>::max() / d)
      return invalid_argument("shape ", shape_to_string(s), " overflows");
    known *= d;
  }
  if (allowzero && has_zero && infer >= 0)
    return invalid_argument("shape with allowzero=1 cannot hold both 0 and -1");
  const int64_t n = shape_numel(in);
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      return invalid_argument("cannot infer the -1 dimension: input has ", n,
                              " elements, the other dims multiply to ", known);
    s[static_cast<size_t>(infer)] = n / known;
  } else if (known != n) {
    return invalid_argument("cannot reshape ", shape_to_string(in), " (", n, " elements) to ",
                            shape_to_string(s), " (", known, " elements)");
  }
  *out = std::move(s);
  return Status::Ok();
}
}  // namespace

Status reshape(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> target;
  if (ctx.opset() < 5) {
    if (!ctx.has_attr("shape")) return invalid_argument("attribute 'shape' is required");
    target = ctx.attr_ints("shape");
  } else {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "shape", &target));
  }
  const bool allowzero = ctx.opset() >= 14 && ctx.attr_int("allowzero", 0) != 0;
  Shape out;
  OSPREY_RETURN_IF_ERROR(reshape_target(x.shape(), target, allowzero, &out));
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::Ok();
}

Status flatten(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -r || axis > r)
    return invalid_argument("attribute 'axis' ", axis, " is out of range for rank ", r);
  if (axis < 0) {
    if (ctx.opset() < 11) return invalid_argument("negative 'axis' needs opset 11");
    axis += r;
  }
  const size_t a = static_cast<size_t>(axis);
  const int64_t outer = dims_product(x.shape(), 0, a);
  const int64_t inner = dims_product(x.shape(), a, x.shape().size());
  ctx.set_output(0, x.reshaped({outer, inner}));
  return Status::Ok();
}

Status squeeze(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> axes;
  bool have_axes = false;
  if (ctx.opset() < 13) {
    have_axes = ctx.has_attr("axes");
    axes = ctx.attr_ints("axes");
  } else if (ctx.has_input(1)) {
    have_axes = true;
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "axes", &axes));
  }
  std::vector<bool> drop(static_cast<size_t>(x.rank()), false);
  if (have_axes) {
    OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, x.rank()));
    for (int64_t a : axes) {
      if (x.dim(a) != 1)
        return invalid_argument("cannot squeeze axis ", a, " of size ", x.dim(a), " in shape ",
                                shape_to_string(x.shape()));
      drop[static_cast<size_t>(a)] = true;
    }
  } else {
    for (int64_t i = 0; i < x.rank(); ++i) drop[static_cast<size_t>(i)] = x.dim(i) == 1;
  }
  Shape out;
  for (int64_t i = 0; i < x.rank(); ++i)
    if (!drop[static_cast<size_t>(i)]) out.push_back(x.dim(i));
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::Ok();
}

Status unsqueeze(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> axes;
  if (ctx.opset() < 13) {
    if (!ctx.has_attr("axes")) return invalid_argument("attribute 'axes' is required");
    axes = ctx.attr_ints("axes");
  } else {
    OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "axes", &axes));
  }
  const int64_t out_rank = x.rank() + static_cast<int64_t>(axes.size());
  OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, out_rank));
  std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
  for (int64_t a : axes) inserted[static_cast<size_t>(a)] = true;
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < out_rank; ++i)
    out.push_back(inserted[static_cast<size_t>(i)] ? 1 : x.shape()[j++]);
  ctx.set_output(0, x.reshaped(std::move(out)));
  return Status::Ok();
}

Status shape(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  const int64_t r = x.rank();
  int64_t start = 0, end = r;
  if (ctx.opset() >= 15) {
    start = ctx.attr_int("start", 0);
    end = ctx.attr_int("end", r);
  }
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  const int64_t n = std::max<int64_t>(end - start, 0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kInt64, {n}));
  for (int64_t i = 0; i < n; ++i) y.data<int64_t>()[i] = x.dim(start + i);
  return Status::Ok();
}

Status size(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kInt64, {}));
  *y.data<int64_t>() = ctx.input(0).numel();
  return Status::Ok();
}

Status expand(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 0, kAnyRank));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> target;
  OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 1, "shape", &target));
  for (int64_t d : target)
    if (d < 0) return invalid_argument("input 'shape' has negative dimension ", d);
  Shape out;
  OSPREY_RETURN_IF_ERROR(broadcast_shapes({x.shape(), target}, &out));
  // Every element is written below (strings assigned over their empty defaults).
  OSPREY_ASSIGN_OR_RETURN(Tensor y, x.dtype() == DType::kString ? ctx.new_output(0, x.dtype(), out)
                                                                : ctx.new_output_uninitialized(0, x.dtype(), out));
  const auto strides = broadcast_strides(x.shape(), out);
  return dispatch_elem(x.dtype(), "Expand", [&]<class E>() {
    copy_strided<E>(y.raw_data(), x.raw_data(), 0, out, strides);
    return Status::Ok();
  });
}

Status constant_of_shape(KernelContext& ctx) {
  std::vector<int64_t> dims;
  OSPREY_RETURN_IF_ERROR(read_int_input(ctx, 0, "input", &dims));
  for (int64_t d : dims)
    if (d < 0) return invalid_argument("input shape has negative dimension ", d);
  const Tensor* value = ctx.attr_tensor("value");
  if (value && value->numel() != 1)
    return invalid_argument("attribute 'value' must hold one element, got ",
                            value->debug_string());
  const DType dt = value ? value->dtype() : DType::kFloat32;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, dims));
  if (!value) return Status::Ok();  // zero-filled float32
  return dispatch_elem(dt, "ConstantOfShape", [&]<class E>() {
    for (int64_t i = 0; i < y.numel(); ++i) E::copy(y.raw_data(), i, value->raw_data(), 0);
    return Status::Ok();
  });
}

Status constant(KernelContext& ctx) {
  int set = 0;
  for (const char* a : {"value", "sparse_value", "value_float", "value_floats", "value_int",
                        "value_ints", "value_string", "value_strings"})
    set += ctx.has_attr(a) ? 1 : 0;
  if (set != 1)
    return invalid_argument("exactly one of the value attributes must be set, got ", set);
  if (ctx.has_attr("value")) {
    const Tensor* v = ctx.attr_tensor("value");
    if (!v) return invalid_argument("attribute 'value' is not a tensor");
    ctx.set_output(0, *v);  // constants are immutable: share the attribute's storage
    return Status::Ok();
  }
  if (ctx.has_attr("sparse_value")) return unimplemented("sparse_value is not supported");
  if (ctx.opset() < 12) return invalid_argument("value_* attributes need opset 12");
  if (ctx.has_attr("value_float")) {
    ctx.set_output(0, Tensor::scalar<float>(ctx.attr_float("value_float", 0)));
  } else if (ctx.has_attr("value_floats")) {
    ctx.set_output(0, Tensor::from_vector<float>(ctx.attr_floats("value_floats")));
  } else if (ctx.has_attr("value_int")) {
    ctx.set_output(0, Tensor::scalar<int64_t>(ctx.attr_int("value_int", 0)));
  } else if (ctx.has_attr("value_ints")) {
    ctx.set_output(0, Tensor::from_vector<int64_t>(ctx.attr_ints("value_ints")));
  } else if (ctx.has_attr("value_string")) {
    ctx.set_output(0, Tensor::scalar<std::string>(ctx.attr_string("value_string", "")));
  } else {
    ctx.set_output(0, Tensor::from_vector<std::string>(ctx.attr_strings("value_strings")));
  }
  return Status::Ok();
}

Status eye_like(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 2));
  const Tensor& x = ctx.input(0);
  DType dt = x.dtype();
  if (ctx.has_attr("dtype")) {
    dt = static_cast<DType>(ctx.attr_int("dtype", 0));
    if (!dtype_is_valid(dt) || dt == DType::kString)
      return invalid_argument("attribute 'dtype' ", ctx.attr_int("dtype", 0),
                              " is not a supported element type");
  }
  const int64_t k = ctx.attr_int("k", 0);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, x.shape()));
  const int64_t rows = x.dim(0), cols = x.dim(1);
  if (k >= cols || k <= -rows) return Status::Ok();  // the diagonal misses the matrix
  return dispatch<NumericBoolTypes>(dt, "EyeLike", [&]<class T>() {
    T* out = y.data<T>();
    for (int64_t i = std::max<int64_t>(0, -k); i < rows && i + k < cols; ++i)
      out[i * cols + i + k] = cast_to<T>(1);
    return Status::Ok();
  });
}

Status range(KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) {
    OSPREY_RETURN_IF_ERROR(require_rank(ctx, i, 0, 1));
    if (ctx.input(i).numel() != 1)
      return invalid_argument("input ", i, " of Range must be a scalar");
  }
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
  const DType dt = ctx.input(0).dtype();
  using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
  return dispatch<RangeTypes>(dt, "Range", [&]<class T>() -> Status {
    const T start = ctx.input(0).data<T>()[0];
    const T limit = ctx.input(1).data<T>()[0];
    const T delta = ctx.input(2).data<T>()[0];
    if (delta == T(0)) return invalid_argument("input 'delta' must not be zero");
    int64_t n = 0;
    if constexpr (std::is_floating_point_v<T>) {
      const double c = std::ceil((static_cast<double>(limit) - start) / delta);
      if (!(c < 9.0e18)) return invalid_argument("Range has too many elements");
      n = c > 0 ? static_cast<int64_t>(c) : 0;
    } else {
      const __int128 span = static_cast<__int128>(limit) - start;
      const __int128 d = delta;
      __int128 q = span / d;
      if (q * d != span && (span > 0) == (d > 0)) q += 1;  // ceil for same-sign operands
      n = q > 0 ? static_cast<int64_t>(q) : 0;
    }
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, dt, {n}));
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T>) {
        out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      } else {  // exact: start + i * delta lies in [start, limit)
        out[i] = static_cast<T>(static_cast<__int128>(start) + static_cast<__int128>(i) * delta);
      }
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
