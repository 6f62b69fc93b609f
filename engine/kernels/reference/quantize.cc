// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor and, from opset 13, per
// axis, from opset 21 per block) and DynamicQuantizeLinear. Rounding is to nearest, ties to even, with saturation.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {
namespace {

// Where per-axis parameters apply: element i of x uses parameter (i / inner) % count. Blocked
// parameters (opset 21, block_size > 0): the scale has x's shape but ceil(len / block) along
// the axis, and element i uses the one of its block.
struct AxisParams {
  int64_t inner = 1;
  int64_t count = 1;  // 1 = per tensor
  int64_t block = 0;  // > 0: blocked along the axis
  int64_t axis_len = 1, blocks = 1;
};

Status read_blocked_params(const KernelContext& ctx, const Tensor& x, const Tensor& scale, int64_t block,
                           AxisParams* p) {
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 1), x.rank(), &axis));
  if (scale.rank() != x.rank())
    return invalid_argument("block_size ", block, " needs a scale of x's rank ", x.rank(), ", got shape ",
                            shape_to_string(scale.shape()));
  for (int64_t d = 0; d < x.rank(); ++d) {
    const int64_t want = d != axis ? x.dim(d) : x.dim(d) == 0 ? 0 : (x.dim(d) - 1) / block + 1;  // ceil
    if (scale.dim(d) != want)
      return invalid_argument("scale has shape ", shape_to_string(scale.shape()), "; x ",
                              shape_to_string(x.shape()), " in blocks of ", block, " along axis ", axis,
                              " needs ", want, " along axis ", d);
  }
  p->block = block;
  p->axis_len = x.dim(axis);
  p->blocks = scale.dim(axis);
  p->count = scale.numel();
  p->inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d) p->inner *= x.dim(d);
  return Status::Ok();
}

// Reads scale (input si) and zero point (input zi, optional) layouts for x.
Status read_axis_params(const KernelContext& ctx, const Tensor& x, int si, int zi,
                        AxisParams* p) {
  if (!ctx.has_input(si)) return invalid_argument("scale input is missing");
  const Tensor& scale = ctx.input(si);
  const int64_t block = ctx.opset() >= 21 ? ctx.attr_int("block_size", 0) : 0;
  if (block < 0) return invalid_argument("block_size must not be negative, got ", block);
  const bool per_tensor = scale.numel() == 1 && scale.rank() <= 1;
  if (block > 0 && x.rank() > 0) {
    OSPREY_RETURN_IF_ERROR(read_blocked_params(ctx, x, scale, block, p));
  } else if (!per_tensor) {
    if (ctx.opset() < 13 || scale.rank() != 1)
      return invalid_argument("scale has shape ", shape_to_string(scale.shape()),
                              "; expected a scalar", ctx.opset() < 13 ? "" : " or a 1-D tensor",
                              ctx.opset() >= 21 ? " (or block_size > 0)" : "");
    int64_t axis = 0;
    OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 1), x.rank(), &axis));
    if (x.rank() == 0 || scale.numel() != x.dim(axis))
      return invalid_argument("scale has ", scale.numel(), " values but x ",
                              shape_to_string(x.shape()), " has ",
                              x.rank() == 0 ? 1 : x.dim(axis), " along axis ", axis);
    p->count = scale.numel();
    p->inner = 1;
    for (int64_t d = axis + 1; d < x.rank(); ++d) p->inner *= x.dim(d);
  }
  if (ctx.has_input(zi)) {
    const Tensor& zp = ctx.input(zi);
    const bool same = p->block > 0 ? zp.shape() == scale.shape() : zp.numel() == scale.numel() && zp.rank() <= 1;
    if (!same)
      return invalid_argument("zero point has shape ", shape_to_string(zp.shape()),
                              " but scale has shape ", shape_to_string(scale.shape()));
  }
  return Status::Ok();
}

inline int64_t param_index(const AxisParams& p, int64_t i) {
  if (p.block > 0) {
    const int64_t in = i % p.inner, a = (i / p.inner) % p.axis_len, outer = i / (p.inner * p.axis_len);
    return (outer * p.blocks + a / p.block) * p.inner + in;
  }
  return p.count == 1 ? 0 : (i / p.inner) % p.count;
}

// The scale as float values; rejects other types.
Status read_scale_values(const Tensor& s, std::vector<float>* out) {
  if (s.dtype() != DType::kFloat32)
    return invalid_argument("scale has type ", dtype_name(s.dtype()), ", expected float32");
  out->assign(s.data<float>(), s.data<float>() + s.numel());
  return Status::Ok();
}

using QuantInputTypes = TypeList<float, double, Float16, BFloat16, int32_t>;

}  // namespace

// QuantizeLinear(x, y_scale, y_zero_point?) -> uint8/int8, from opset 21 also uint16/int16 (the
// type of y_zero_point, or output_dtype).
Status quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AxisParams p;
  OSPREY_RETURN_IF_ERROR(read_axis_params(ctx, x, 1, 2, &p));
  std::vector<float> scale;
  OSPREY_RETURN_IF_ERROR(read_scale_values(ctx.input(1), &scale));
  const bool has_zp = ctx.has_input(2);
  DType ytype = has_zp ? ctx.input(2).dtype() : DType::kUInt8;
  if (ctx.opset() >= 21 && ctx.attr_int("output_dtype", 0) != 0) {  // the output type without a zero point
    const int64_t code = ctx.attr_int("output_dtype", 0);
    const DType want = code >= 1 && code <= 16 ? static_cast<DType>(code) : DType::kUndefined;
    if (want == DType::kUndefined)
      return invalid_argument("output_dtype ", code, " is not a supported element type");
    if (has_zp && want != ytype)
      return invalid_argument("output_dtype ", dtype_name(want), " differs from y_zero_point's type ",
                              dtype_name(ytype));
    ytype = want;
  }
  const bool wide = ctx.opset() >= 21 && (ytype == DType::kUInt16 || ytype == DType::kInt16);
  if (ytype != DType::kUInt8 && ytype != DType::kInt8 && !wide)
    return invalid_argument(has_zp ? "y_zero_point has type " : "output_dtype ", dtype_name(ytype),
                            ctx.opset() >= 21 ? ", expected uint8, int8, uint16 or int16" : ", expected uint8 or int8");
  std::vector<float> zp(scale.size(), 0.0f);
  if (has_zp)
    for (int64_t i = 0; i < ctx.input(2).numel(); ++i)
      zp[static_cast<size_t>(i)] = static_cast<float>(ctx.input(2).get_as_int64(i));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, ytype, x.shape()));
  return dispatch<QuantInputTypes>(x.dtype(), "QuantizeLinear", [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* in = x.data<T>();
    return dispatch<TypeList<uint8_t, int8_t, uint16_t, int16_t>>(ytype, "QuantizeLinear", [&]<class Q>() {
      Q* out = y.data<Q>();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t k = static_cast<size_t>(param_index(p, i));
        double q;
        if constexpr (std::is_same_v<T, double>) {
          // A float conversion would lose precision for doubles: use them directly.
          q = std::nearbyint(in[i] / static_cast<double>(scale[k])) + zp[k];
        } else {
          q = static_cast<double>(std::nearbyint(static_cast<C>(static_cast<float>(in[i])) / static_cast<C>(scale[k]))) +
              static_cast<double>(zp[k]);
        }
        out[i] = saturate_round<Q>(q);
      }
      return Status::Ok();
    });
  });
}

// DequantizeLinear(x, x_scale, x_zero_point?) -> float32.
Status dequantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AxisParams p;
  OSPREY_RETURN_IF_ERROR(read_axis_params(ctx, x, 1, 2, &p));
  std::vector<float> scale;
  OSPREY_RETURN_IF_ERROR(read_scale_values(ctx.input(1), &scale));
  std::vector<int64_t> zp(scale.size(), 0);
  if (ctx.has_input(2)) {
    const Tensor& z = ctx.input(2);
    if (z.dtype() != x.dtype())
      return invalid_argument("x_zero_point has type ", dtype_name(z.dtype()), ", expected ",
                              dtype_name(x.dtype()));
    for (int64_t i = 0; i < z.numel(); ++i) {
      zp[static_cast<size_t>(i)] = z.get_as_int64(i);
      if (x.dtype() == DType::kInt32 && zp[static_cast<size_t>(i)] != 0)
        return invalid_argument("x_zero_point must be 0 for int32 input");
    }
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kFloat32, x.shape()));
  if ((x.dtype() == DType::kUInt16 || x.dtype() == DType::kInt16) && ctx.opset() < 21)
    return invalid_argument("DequantizeLinear: ", dtype_name(x.dtype()), " input needs opset 21");
  return dispatch<TypeList<uint8_t, int8_t, int32_t, uint16_t, int16_t>>(x.dtype(), "DequantizeLinear", [&]<class T>() {
    const T* in = x.data<T>();
    float* out = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const size_t k = static_cast<size_t>(param_index(p, i));
      out[i] = static_cast<float>(static_cast<int64_t>(in[i]) - zp[k]) * scale[k];
    }
    return Status::Ok();
  });
}

// DynamicQuantizeLinear(x) -> (y uint8, y_scale, y_zero_point), range widened to include 0.
Status dynamic_quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::kFloat32)
    return invalid_argument("input has type ", dtype_name(x.dtype()), ", expected float32");
  const float* in = x.data<float>();
  float lo = 0.0f, hi = 0.0f;
  for (int64_t i = 0; i < x.numel(); ++i) {  // NaNs are skipped (and quantize to 0)
    lo = std::min(lo, in[i]);
    hi = std::max(hi, in[i]);
  }
  const float scale = (hi - lo) / 255.0f;
  uint8_t zp = 0;
  if (scale > 0 && std::isfinite(scale)) zp = saturate_round<uint8_t>(std::nearbyint(-lo / scale));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, DType::kUInt8, x.shape()));
  OSPREY_ASSIGN_OR_RETURN(Tensor ys, ctx.new_output(1, DType::kFloat32, {}));
  OSPREY_ASSIGN_OR_RETURN(Tensor yz, ctx.new_output(2, DType::kUInt8, {}));
  *ys.data<float>() = scale;
  *yz.data<uint8_t>() = zp;
  uint8_t* out = y.data<uint8_t>();
  if (scale > 0)
    for (int64_t i = 0; i < x.numel(); ++i)
      out[i] = saturate_round<uint8_t>(static_cast<double>(std::nearbyint(in[i] / scale)) + zp);
  return Status::Ok();
}

}  // namespace osprey::ref
