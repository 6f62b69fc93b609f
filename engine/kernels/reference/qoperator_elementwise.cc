// The element-wise quantized ops of the QOperator format: com.osprey / com.microsoft QLinearAdd
// and com.microsoft QLinearMul, QLinearLeakyRelu, QLinearSigmoid, QLinearSoftmax, QLinearConcat
// and QLinearWhere. Each is its float op between a dequantization (x - zero_point) * scale and a
// quantization round(y / scale) + zero_point (ties to even, saturated), with per-tensor scales
// and zero points; an omitted zero point is 0 (of the input's type; an output's is that of the
// first quantized input, as onnxruntime's type constraints tie them).
#include <cmath>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"
#include "kernels/reference/qparam.h"

namespace osprey::ref {
namespace {

// QLinearAdd / QLinearMul (A, a_scale, a_zp?, B, b_scale, b_zp?, c_scale, c_zp?), broadcasting.
Status qlinear_binary(KernelContext& ctx, bool mul, const char* op) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 3, 4, 6}, op));
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(3);
  Shape out;
  if (!broadcast_shapes({a.shape(), b.shape()}, &out).ok())
    return invalid_argument("A has shape ", shape_to_string(a.shape()), " and B ", shape_to_string(b.shape()),
                            ", which do not broadcast");
  QParam qa, qb, qc;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "A", 1, 2, 0, DType::kUInt8, &qa));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "B", 4, 5, 3, DType::kUInt8, &qb));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "C", 6, 7, -1, a.dtype(), &qc));
  const std::string act = ctx.attr_string("activation", "");
  if (!act.empty() && (mul || act != "Relu"))
    return invalid_argument("activation '", act, "': ", op, " takes ", mul ? "none" : "none or Relu");
  const bool relu = act == "Relu";
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qc.type, out));
  // A product as onnxruntime computes it: the exact integer product times one scale ratio,
  // plus C's zero point, in float, then rounded.
  const float ratio = qa.scale * qb.scale / qc.scale;
  StridedIter it(out, {broadcast_strides(a.shape(), out), broadcast_strides(b.shape(), out)});
  for (int64_t i = 0; i < y.numel(); ++i, it.next()) {
    const int32_t va = byte_at(a, it.offset(0)), vb = byte_at(b, it.offset(1));
    if (mul) {
      const float steps = static_cast<float>((va - qa.zp) * (vb - qb.zp)) * ratio + static_cast<float>(qc.zp);
      store_byte(y, i, qc.saturated(static_cast<double>(std::nearbyint(steps))));
      continue;
    }
    float v = qa.dequantize(va) + qb.dequantize(vb);
    if (relu) v = v < 0.0f ? 0.0f : v;
    store_byte(y, i, qc.quantize(v));
  }
  return Status::Ok();
}

// A unary op (X, x_scale, x_zp?, y_scale, y_zp?) as a table of its 256 possible results.
template <class F>
Status qlinear_lookup(KernelContext& ctx, const char* op, F fn) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 3}, op));
  const Tensor& x = ctx.input(0);
  QParam qx, qy;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 1, 2, 0, DType::kUInt8, &qx));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 3, 4, -1, x.dtype(), &qy));
  int32_t table[256];
  const int32_t lo = qx.type == DType::kInt8 ? -128 : 0;
  for (int32_t v = 0; v < 256; ++v) table[v] = qy.quantize(fn(qx.dequantize(v + lo)));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qy.type, x.shape()));
  for (int64_t i = 0; i < x.numel(); ++i) store_byte(y, i, table[byte_at(x, i) - lo]);
  return Status::Ok();
}

}  // namespace

// com.osprey QLinearAdd, made by the qdq_add_fusion pass from DequantizeLinear(a) +
// DequantizeLinear(b) [-> Relu] -> QuantizeLinear, the same float operations in the same order
// (activation "" or "Relu"; a and b of one shape); the same kernel runs onnxruntime's
// com.microsoft QLinearAdd, whose a and b broadcast as numpy's.
Status qlinear_add(KernelContext& ctx) { return qlinear_binary(ctx, false, "QLinearAdd"); }
Status qlinear_mul(KernelContext& ctx) { return qlinear_binary(ctx, true, "QLinearMul"); }

Status qlinear_leaky_relu(KernelContext& ctx) {
  const float alpha = ctx.attr_float("alpha", 0.01f);
  return qlinear_lookup(ctx, "QLinearLeakyRelu", [alpha](float v) { return v >= 0.0f ? v : alpha * v; });
}

Status qlinear_sigmoid(KernelContext& ctx) {
  return qlinear_lookup(ctx, "QLinearSigmoid", [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}

// QLinearSoftmax(X, x_scale, x_zp?, y_scale, y_zp), attributes axis and opset (the Softmax
// opset it replaces: before 13 the dims from axis are one softmax, from 13 the axis alone).
Status qlinear_softmax(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 3, 4}, "QLinearSoftmax"));
  if (!ctx.has_attr("opset")) return invalid_argument("QLinearSoftmax: attribute opset is required");
  const Tensor& x = ctx.input(0);
  QParam qx, qy;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 1, 2, 0, DType::kUInt8, &qx));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 3, 4, -1, DType::kUInt8, &qy));
  const int64_t opset = ctx.attr_int("opset", 13);
  SoftmaxView v;
  OSPREY_RETURN_IF_ERROR(softmax_view(x, opset, ctx.attr_int("axis", opset < 13 ? 1 : -1), &v));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qy.type, x.shape()));
  std::vector<float> e(static_cast<size_t>(v.n));
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t in = 0; in < v.inner; ++in) {
      const int64_t base = o * v.n * v.inner + in;
      int32_t top = byte_at(x, base);
      for (int64_t k = 1; k < v.n; ++k) top = std::max(top, byte_at(x, base + k * v.inner));
      double sum = 0;
      for (int64_t k = 0; k < v.n; ++k) {
        e[static_cast<size_t>(k)] = std::exp(static_cast<float>(byte_at(x, base + k * v.inner) - top) * qx.scale);
        sum += e[static_cast<size_t>(k)];
      }
      for (int64_t k = 0; k < v.n; ++k)
        store_byte(y, base + k * v.inner, qy.quantize(static_cast<float>(e[static_cast<size_t>(k)] / sum)));
    }
  return Status::Ok();
}

// QLinearConcat(y_scale, y_zp, X0, x0_scale, x0_zp, X1, ...), attribute axis: each input
// re-quantized to the output's scale and zero point.
Status qlinear_concat(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1}, "QLinearConcat"));
  const int n_in = (ctx.num_inputs() - 2) / 3;
  if (n_in < 1 || ctx.num_inputs() != 2 + 3 * n_in)
    return invalid_argument("QLinearConcat takes y_scale, y_zero_point and triples (X, scale, zero point); got ",
                            ctx.num_inputs(), " inputs");
  if (!ctx.has_attr("axis")) return invalid_argument("QLinearConcat: attribute axis is required");
  QParam qy;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "Y", 0, 1, -1, DType::kUInt8, &qy));
  const Tensor& first = ctx.input(2);
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", 0), first.rank(), &axis));
  Shape out = first.shape();
  out[static_cast<size_t>(axis)] = 0;
  std::vector<QParam> q(static_cast<size_t>(n_in));
  for (int k = 0; k < n_in; ++k) {
    OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {2 + 3 * k, 3 + 3 * k}, "QLinearConcat"));
    const Tensor& t = ctx.input(2 + 3 * k);
    OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 3 + 3 * k, 4 + 3 * k, 2 + 3 * k, DType::kUInt8, &q[static_cast<size_t>(k)]));
    bool same = t.rank() == first.rank();
    for (int64_t d = 0; same && d < t.rank(); ++d) same = d == axis || t.dim(d) == first.dim(d);
    if (!same)
      return invalid_argument("QLinearConcat: input ", 2 + 3 * k, " has shape ", shape_to_string(t.shape()),
                              ", which differs from ", shape_to_string(first.shape()), " off axis ", axis);
    out[static_cast<size_t>(axis)] += t.dim(axis);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qy.type, out));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= out[static_cast<size_t>(d)];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(out.size()); ++d) inner *= out[static_cast<size_t>(d)];
  const int64_t row = out[static_cast<size_t>(axis)] * inner;
  int64_t at = 0;  // where this input's block starts in each output row
  for (int k = 0; k < n_in; ++k) {
    const Tensor& t = ctx.input(2 + 3 * k);
    const QParam& qk = q[static_cast<size_t>(k)];
    const int64_t block = t.dim(axis) * inner;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < block; ++j) store_byte(y, o * row + at + j, qy.quantize(qk.dequantize(byte_at(t, o * block + j))));
    at += block;
  }
  return Status::Ok();
}

// QLinearWhere(condition, X, x_scale, x_zp, Y, y_scale, y_zp, z_scale, z_zp), broadcasting:
// the chosen value re-quantized to z's scale and zero point.
Status qlinear_where(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 2, 3, 4, 5, 6, 7, 8}, "QLinearWhere"));
  const Tensor& c = ctx.input(0);
  const Tensor& a = ctx.input(1);
  const Tensor& b = ctx.input(4);
  if (c.dtype() != DType::kBool) return invalid_argument("condition has type ", dtype_name(c.dtype()), ", expected bool");
  Shape out;
  if (!broadcast_shapes({c.shape(), a.shape(), b.shape()}, &out).ok())
    return invalid_argument("condition ", shape_to_string(c.shape()), ", X ", shape_to_string(a.shape()), " and Y ",
                            shape_to_string(b.shape()), " do not broadcast");
  QParam qa, qb, qz;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 2, 3, 1, DType::kUInt8, &qa));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 5, 6, 4, DType::kUInt8, &qb));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "z", 7, 8, -1, a.dtype(), &qz));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qz.type, out));
  StridedIter it(out, {broadcast_strides(c.shape(), out), broadcast_strides(a.shape(), out),
                       broadcast_strides(b.shape(), out)});
  for (int64_t i = 0; i < y.numel(); ++i, it.next()) {
    const float v = c.data<bool>()[it.offset(0)] ? qa.dequantize(byte_at(a, it.offset(1)))
                                                 : qb.dequantize(byte_at(b, it.offset(2)));
    store_byte(y, i, qz.quantize(v));
  }
  return Status::Ok();
}

}  // namespace osprey::ref
