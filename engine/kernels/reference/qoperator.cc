// onnxruntime's com.microsoft quantized operators that its quantize_static writes in the
// QOperator format (beside ONNX's QLinearConv): QLinearGlobalAveragePool and QGemm here, the
// element-wise ones in qoperator_elementwise.cc, QLinearAveragePool in pool.cc. Per-tensor
// activations; rounding to nearest even with saturation, as QuantizeLinear.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"
#include "kernels/reference/qparam.h"

namespace osprey::ref {

// QLinearGlobalAveragePool(X, x_scale, x_zero_point, y_scale, y_zero_point), channels_last 0
// (X [N, C, spatial...]) or 1 (X [N, spatial..., C]): each channel's mean over its spatial
// positions, y = round((sum(x) - count * x_zp) * (x_scale / count / y_scale)) + y_zp.
Status qlinear_global_average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!is_8bit(x.dtype())) return invalid_argument("X has type ", dtype_name(x.dtype()), ", expected uint8 or int8");
  if (x.rank() < 3) return invalid_argument("X has shape ", shape_to_string(x.shape()), "; expected rank 3 or more");
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  QParam qx, qy;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 1, 2, 0, x.dtype(), &qx));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 3, 4, 0, x.dtype(), &qy));
  const int64_t n = x.dim(0), c = cl ? x.dim(x.rank() - 1) : x.dim(1);
  const int64_t count = x.numel() / std::max<int64_t>(1, n * c);
  Shape out(static_cast<size_t>(x.rank()), 1);
  out[0] = n;
  out[cl ? out.size() - 1 : 1] = c;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), out));
  if (y.numel() == 0) return Status::Ok();
  const float mult = qx.scale / static_cast<float>(count) / qy.scale;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      int64_t sum = 0;
      for (int64_t p = 0; p < count; ++p)
        sum += byte_at(x, cl ? (b * count + p) * c + ch : (b * c + ch) * count + p);
      const float v = static_cast<float>(sum - count * qx.zp) * mult;
      const double q = static_cast<double>(std::nearbyint(v)) + qy.zp;
      store_byte(y, b * c + ch, y.dtype() == DType::kInt8 ? saturate_round<int8_t>(q) : saturate_round<uint8_t>(q));
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
  QParam qa;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "a", 1, 2, 0, A.dtype(), &qa));
  const float as = qa.scale;
  const int32_t az = qa.zp;
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
  QParam qy;
  if (quantized) OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 7, 8, -1, DType::kUInt8, &qy));
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, quantized ? qy.type : DType::kFloat32, {M, N}));
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
      if (quantized) store_byte(Y, i * N + j, qy.quantize(v));
      else Y.data<float>()[i * N + j] = v;
    }
  return Status::Ok();
}

}  // namespace osprey::ref
