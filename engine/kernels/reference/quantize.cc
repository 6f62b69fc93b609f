// Linear quantization: QuantizeLinear, DequantizeLinear (per tensor and, from opset 13, per
// axis) and DynamicQuantizeLinear. Rounding is to nearest, ties to even, with saturation.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {
namespace {

// Where per-axis parameters apply: element i of x uses parameter (i / inner) % count.
struct AxisParams {
  int64_t inner = 1;
  int64_t count = 1;  // 1 = per tensor
};

// Reads scale (input si) and zero point (input zi, optional) layouts for x.
Status read_axis_params(const KernelContext& ctx, const Tensor& x, int si, int zi,
                        AxisParams* p) {
  if (!ctx.has_input(si)) return invalid_argument("scale input is missing");
  const Tensor& scale = ctx.input(si);
  const bool per_tensor = scale.numel() == 1 && scale.rank() <= 1;
  if (!per_tensor) {
    if (ctx.opset() < 13 || scale.rank() != 1)
      return invalid_argument("scale has shape ", shape_to_string(scale.shape()),
                              "; expected a scalar", ctx.opset() < 13 ? "" : " or a 1-D tensor");
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
    if (zp.numel() != scale.numel() || zp.rank() > 1)
      return invalid_argument("zero point has shape ", shape_to_string(zp.shape()),
                              " but scale has shape ", shape_to_string(scale.shape()));
  }
  return Status::Ok();
}

inline int64_t param_index(const AxisParams& p, int64_t i) {
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

// QuantizeLinear(x, y_scale, y_zero_point?) -> uint8/int8 (type of y_zero_point).
Status quantize_linear(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  AxisParams p;
  OSPREY_RETURN_IF_ERROR(read_axis_params(ctx, x, 1, 2, &p));
  std::vector<float> scale;
  OSPREY_RETURN_IF_ERROR(read_scale_values(ctx.input(1), &scale));
  const bool has_zp = ctx.has_input(2);
  const DType ytype = has_zp ? ctx.input(2).dtype() : DType::kUInt8;
  if (ytype != DType::kUInt8 && ytype != DType::kInt8)
    return invalid_argument("y_zero_point has type ", dtype_name(ytype), ", expected uint8 or int8");
  std::vector<float> zp(scale.size(), 0.0f);
  if (has_zp)
    for (int64_t i = 0; i < ctx.input(2).numel(); ++i)
      zp[static_cast<size_t>(i)] = static_cast<float>(ctx.input(2).get_as_int64(i));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, ytype, x.shape()));
  return dispatch<QuantInputTypes>(x.dtype(), "QuantizeLinear", [&]<class T>() {
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const T* in = x.data<T>();
    auto run = [&]<class Q>(Q* out) {
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t k = static_cast<size_t>(param_index(p, i));
        const C q = std::nearbyint(static_cast<C>(static_cast<float>(in[i])) / static_cast<C>(scale[k]));
        out[i] = saturate_round<Q>(static_cast<double>(q) + static_cast<double>(zp[k]));
      }
    };
    if constexpr (std::is_same_v<T, double>) {
      // static_cast<float> above would lose precision for doubles: use them directly.
      for (int64_t i = 0; i < x.numel(); ++i) {
        const size_t k = static_cast<size_t>(param_index(p, i));
        const double q = std::nearbyint(in[i] / static_cast<double>(scale[k])) + zp[k];
        if (ytype == DType::kUInt8) y.data<uint8_t>()[i] = saturate_round<uint8_t>(q);
        else y.data<int8_t>()[i] = saturate_round<int8_t>(q);
      }
    } else if (ytype == DType::kUInt8) {
      run(y.data<uint8_t>());
    } else {
      run(y.data<int8_t>());
    }
    return Status::Ok();
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
  return dispatch<TypeList<uint8_t, int8_t, int32_t>>(x.dtype(), "DequantizeLinear", [&]<class T>() {
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
