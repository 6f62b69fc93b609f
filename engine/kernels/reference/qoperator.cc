// onnxruntime's com.microsoft quantized operators that its quantize_static writes in the
// QOperator format (beside ONNX's QLinearConv): QLinearGlobalAveragePool and QGemm.
// (com.microsoft QLinearAdd runs on QLinearAdd's kernel, quantize.cc.) Per-tensor activations;
// rounding to nearest even with saturation, as QuantizeLinear.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {
namespace {

bool is_8bit(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

int32_t byte_at(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt8 ? static_cast<int32_t>(t.data<int8_t>()[i])
                                   : static_cast<int32_t>(t.data<uint8_t>()[i]);
}

void store_byte(Tensor& t, int64_t i, double v) {
  if (t.dtype() == DType::kInt8) t.data<int8_t>()[i] = saturate_round<int8_t>(v);
  else t.data<uint8_t>()[i] = saturate_round<uint8_t>(v);
}

// Input i as one float32 value.
Status scalar_scale(const KernelContext& ctx, int i, const char* what, float* v) {
  if (!ctx.has_input(i)) return invalid_argument(what, " (input ", i, ") is missing");
  const Tensor& t = ctx.input(i);
  if (t.dtype() != DType::kFloat32 || t.numel() != 1 || t.rank() > 1)
    return invalid_argument(what, " must be one float32 value, got ", dtype_name(t.dtype()), " ",
                            shape_to_string(t.shape()));
  *v = t.data<float>()[0];
  return Status::Ok();
}

// Input i as one zero point of type `type` (absent: 0).
Status scalar_zero_point(const KernelContext& ctx, int i, const char* what, DType type, int32_t* v) {
  *v = 0;
  if (!ctx.has_input(i)) return Status::Ok();
  const Tensor& t = ctx.input(i);
  if (t.dtype() != type || t.numel() != 1 || t.rank() > 1)
    return invalid_argument(what, " must be one ", dtype_name(type), " value, got ", dtype_name(t.dtype()), " ",
                            shape_to_string(t.shape()));
  *v = byte_at(t, 0);
  return Status::Ok();
}

}  // namespace

// QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point), channels_last 0
// (X [N, C, spatial...]) or 1 (X [N, spatial..., C]): each channel's mean over its spatial
// positions, y = round((sum(x) - count * x_zp) * (x_scale / count / y_scale)) + y_zp.
Status qlinear_global_average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!is_8bit(x.dtype())) return invalid_argument("X has type ", dtype_name(x.dtype()), ", expected uint8 or int8");
  if (x.rank() < 3) return invalid_argument("X has shape ", shape_to_string(x.shape()), "; expected rank 3 or more");
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  float xs = 0, ys = 0;
  int32_t xz = 0, yz = 0;
  OSPREY_RETURN_IF_ERROR(scalar_scale(ctx, 1, "x_scale", &xs));
  OSPREY_RETURN_IF_ERROR(scalar_zero_point(ctx, 2, "x_zero_point", x.dtype(), &xz));
  OSPREY_RETURN_IF_ERROR(scalar_scale(ctx, 3, "y_scale", &ys));
  OSPREY_RETURN_IF_ERROR(scalar_zero_point(ctx, 4, "y_zero_point", x.dtype(), &yz));
  const int64_t n = x.dim(0), c = cl ? x.dim(x.rank() - 1) : x.dim(1);
  const int64_t count = x.numel() / std::max<int64_t>(1, n * c);
  Shape out(static_cast<size_t>(x.rank()), 1);
  out[0] = n;
  out[cl ? out.size() - 1 : 1] = c;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  const float mult = xs / static_cast<float>(count) / ys;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      int64_t sum = 0;
      for (int64_t p = 0; p < count; ++p)
        sum += byte_at(x, cl ? (b * count + p) * c + ch : (b * c + ch) * count + p);
      const float v = static_cast<float>(sum - count * xz) * mult;
      store_byte(y, b * c + ch, static_cast<double>(std::nearbyint(v)) + yz);
    }
  return Status::Ok();
}

// QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?, y_zero_point?),
// attributes alpha, transA, transB: Y = alpha * (A - a_zp)(B - b_zp) * a_scale * b_scale[n] +
// C * a_scale * b_scale[n] (C int32, [N] or [M, N] or one value), quantized with y_scale and
// y_zero_point when y_scale is given, float32 otherwise. b_scale / b_zero_point are one value
// or one per column of the product.
Status qgemm(KernelContext& ctx) {
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(3);
  if (!is_8bit(A.dtype()) || !is_8bit(B.dtype()))
    return invalid_argument("A and B must be uint8 or int8, got ", dtype_name(A.dtype()), " and ", dtype_name(B.dtype()));
  if (A.rank() != 2 || B.rank() != 2)
    return invalid_argument("A ", shape_to_string(A.shape()), " and B ", shape_to_string(B.shape()), " must be matrices");
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const float alpha = ctx.attr_float("alpha", 1.0f);
  const int64_t M = ta ? A.dim(1) : A.dim(0), K = ta ? A.dim(0) : A.dim(1);
  const int64_t N = tb ? B.dim(0) : B.dim(1);
  if ((tb ? B.dim(1) : B.dim(0)) != K)
    return invalid_argument("inner dimensions differ: A ", shape_to_string(A.shape()), (ta ? " (transposed)" : ""),
                            ", B ", shape_to_string(B.shape()), (tb ? " (transposed)" : ""));
  float as = 0;
  int32_t az = 0;
  OSPREY_RETURN_IF_ERROR(scalar_scale(ctx, 1, "a_scale", &as));
  OSPREY_RETURN_IF_ERROR(scalar_zero_point(ctx, 2, "a_zero_point", A.dtype(), &az));
  if (!ctx.has_input(4)) return invalid_argument("b_scale (input 4) is missing");
  const Tensor& bs = ctx.input(4);
  if (bs.dtype() != DType::kFloat32 || !(bs.numel() == 1 || (bs.rank() == 1 && bs.numel() == N)))
    return invalid_argument("b_scale must be float32 with one value or ", N, ", got ", shape_to_string(bs.shape()));
  std::vector<int32_t> bz(static_cast<size_t>(bs.numel()), 0);
  if (ctx.has_input(5)) {
    const Tensor& z = ctx.input(5);
    if (z.dtype() != B.dtype() || z.numel() != bs.numel())
      return invalid_argument("b_zero_point must be ", dtype_name(B.dtype()), " with b_scale's count (", bs.numel(),
                              "), got ", dtype_name(z.dtype()), " ", shape_to_string(z.shape()));
    for (int64_t i = 0; i < z.numel(); ++i) bz[static_cast<size_t>(i)] = byte_at(z, i);
  }
  const bool has_c = ctx.has_input(6);
  if (has_c) {
    const Tensor& c = ctx.input(6);
    const bool ok_shape = c.numel() == 1 || c.shape() == Shape{N} || c.shape() == Shape{1, N} || c.shape() == Shape{M, N};
    if (c.dtype() != DType::kInt32 || !ok_shape)
      return invalid_argument("C must be int32 of shape [N], [1, N] or [M, N] (N = ", N, ", M = ", M, "), got ",
                              dtype_name(c.dtype()), " ", shape_to_string(c.shape()));
  }
  const bool quantized = ctx.has_input(7);
  float ys = 1;
  int32_t yz = 0;
  DType yt = DType::kFloat32;
  if (quantized) {
    OSPREY_RETURN_IF_ERROR(scalar_scale(ctx, 7, "y_scale", &ys));
    yt = ctx.has_input(8) ? ctx.input(8).dtype() : DType::kUInt8;
    if (!is_8bit(yt)) return invalid_argument("y_zero_point must be uint8 or int8, got ", dtype_name(yt));
    OSPREY_RETURN_IF_ERROR(scalar_zero_point(ctx, 8, "y_zero_point", yt, &yz));
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, yt, {M, N}));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const size_t q = bs.numel() > 1 ? static_cast<size_t>(j) : 0;
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += static_cast<int64_t>(byte_at(A, ta ? k * M + i : i * K + k) - az) *
               (byte_at(B, tb ? j * K + k : k * N + j) - bz[q]);
      const float scale = as * bs.data<float>()[q];
      float v = alpha * static_cast<float>(acc) * scale;
      if (has_c) {
        const Tensor& c = ctx.input(6);
        const int64_t ci = c.numel() == 1 ? 0 : c.numel() == N ? j : i * N + j;
        v += static_cast<float>(c.data<int32_t>()[ci]) * scale;
      }
      if (quantized) store_byte(Y, i * N + j, static_cast<double>(std::nearbyint(v / ys)) + yz);
      else Y.data<float>()[i * N + j] = v;
    }
  return Status::Ok();
}

}  // namespace osprey::ref
