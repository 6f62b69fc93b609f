// Matrix products: Gemm, MatMul, MatMulInteger (and com.osprey MatMulIntegerToFloat),
// QLinearMatMul, all on the shared GEMM core.
#include <vector>

#include "kernels/reference/activation.h"
#include "kernels/reference/common.h"
#include "kernels/reference/gemm_core.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {
namespace {

// Element types the GEMM core runs on; 16-bit floats are computed in float.
using GemmTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>;

template <class T>
Result<Tensor> to_float(const KernelContext& ctx, const Tensor& t) {
  OSPREY_ASSIGN_OR_RETURN(Tensor f, ctx.new_tensor(DType::kFloat32, t.shape()));
  for (int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = static_cast<float>(t.data<T>()[i]);
  return f;
}

// Numpy matmul shapes: 1-D operands get a unit dim that is dropped from the output.
struct MatMulShape {
  int64_t M = 0, K = 0, N = 0;
  Shape out;
  Shape batch;                      // broadcast batch dims
  std::vector<int64_t> a_bstrides;  // strides over `batch` in units of matrices (0 = broadcast)
  std::vector<int64_t> b_bstrides;
  bool b_shared = false;  // one B for all batches and A contiguous: fold the batch into M
};

Status matmul_shape(const Shape& a_in, const Shape& b_in, MatMulShape* s) {
  if (a_in.empty() || b_in.empty()) return invalid_argument("MatMul operands must have rank >= 1");
  Shape a = a_in, b = b_in;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  s->M = a[a.size() - 2];
  s->K = a[a.size() - 1];
  s->N = b[b.size() - 1];
  if (b[b.size() - 2] != s->K)
    return invalid_argument("MatMul inner dimensions differ: ", shape_to_string(a_in), " x ",
                            shape_to_string(b_in));
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  OSPREY_RETURN_IF_ERROR(broadcast_shapes({ab, bb}, &s->batch));
  s->a_bstrides = broadcast_strides(ab, s->batch);
  s->b_bstrides = broadcast_strides(bb, s->batch);
  s->out = s->batch;
  if (a_in.size() > 1) s->out.push_back(s->M);
  if (b_in.size() > 1) s->out.push_back(s->N);
  bool b_single = true;
  for (int64_t v : bb) b_single = b_single && v == 1;
  s->b_shared = b_single && ab == s->batch;
  return Status::Ok();
}

// y = a x b for every batch, T one of the GEMM core types.
template <class T>
void matmul_run(const MatMulShape& s, const T* a, const T* b, T* y, ThreadPool* pool) {
  const int64_t M = s.M, K = s.K, N = s.N;
  int64_t batches = 1;
  for (int64_t v : s.batch) batches *= v;
  if (s.b_shared) {
    gemm<T>(false, false, batches * M, N, K, T(1), a, K, b, N, T(0), y, N, pool);
    return;
  }
  StridedIter it(s.batch, {s.a_bstrides, s.b_bstrides});
  for (int64_t i = 0; i < batches; ++i, it.next())
    gemm<T>(false, false, M, N, K, T(1), a + it.offset(0) * M * K, K, b + it.offset(1) * K * N, N,
            T(0), y + i * M * N, N, pool);
}

// Unidirectional broadcast of C (rank <= 2) to [M, N]; returns strides (row, col).
Status gemm_c_strides(const Shape& c, int64_t M, int64_t N, int64_t* rs, int64_t* cs) {
  Shape c2 = c;
  if (c2.size() > 2) return invalid_argument("input C has rank ", c.size(), ", expected <= 2");
  while (c2.size() < 2) c2.insert(c2.begin(), 1);
  if ((c2[0] != 1 && c2[0] != M) || (c2[1] != 1 && c2[1] != N))
    return invalid_argument("input C ", shape_to_string(c), " cannot be broadcast to [", M, ",",
                            N, "]");
  *rs = c2[0] == 1 ? 0 : c2[1];
  *cs = c2[1] == 1 ? 0 : 1;
  return Status::Ok();
}

// Y = alpha * op(A) op(B) + beta * C on the core type U (T is the tensor element type).
template <class T, class U>
void gemm_op_run(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, float beta,
                 const U* a, const U* b, const U* c, int64_t crs, int64_t ccs, U* y,
                 ThreadPool* pool) {
  const bool use_c = c != nullptr && beta != 0.0f;
  if (use_c)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) y[i * N + j] = static_cast<U>(beta) * c[i * crs + j * ccs];
  gemm<U>(ta, tb, M, N, K, static_cast<U>(alpha), a, ta ? M : K, b, tb ? K : N,
          use_c ? U(1) : U(0), y, N, pool);
}

// Zero points of MatMulInteger / QLinearMatMul operand `t` (rows of A or columns of B):
// a scalar, a 1-D tensor with one per row (A) / column (B), or a tensor of t's shape with the
// reduced dim set to 1. Returns t - zero_point as int32.
Result<Tensor> subtract_zp(const KernelContext& ctx, const Tensor& t, int zi, bool is_a,
                           const char* what) {
  OSPREY_ASSIGN_OR_RETURN(Tensor r, ctx.new_tensor(DType::kInt32, t.shape()));
  const bool has_zp = ctx.has_input(zi);
  const Tensor zp = has_zp ? ctx.input(zi) : Tensor();
  if (has_zp && zp.dtype() != t.dtype())
    return invalid_argument(what, " has type ", dtype_name(zp.dtype()), ", expected ",
                            dtype_name(t.dtype()));
  const int64_t rank = t.rank();
  const int64_t cols = rank >= 1 ? t.dim(rank - 1) : 1;
  // The dim that the zero point follows: rows of A (dim -2, or the only dim of a 1-D A is K,
  // so 1-D A has one row) and columns of B (dim -1).
  int mode = 0;  // 0: scalar, 1: 1-D per row/col, 2: full shape with reduced dim 1
  if (has_zp && !(zp.numel() == 1 && zp.rank() <= 1)) {
    const int64_t rows_a = rank >= 2 ? t.dim(rank - 2) : 1;
    if (zp.rank() == 1 && zp.numel() == (is_a ? rows_a : (rank >= 2 ? cols : 1))) {
      mode = 1;
    } else {
      Shape want = t.shape();
      if (rank >= 2) want[static_cast<size_t>(is_a ? rank - 1 : rank - 2)] = 1;
      if (zp.shape() != want || rank < 2)
        return invalid_argument(what, " has shape ", shape_to_string(zp.shape()),
                                ", which does not match input ", shape_to_string(t.shape()));
      mode = 2;
    }
  }
  const int64_t rows = rank >= 2 ? t.dim(rank - 2) : 1;
  auto run = [&](const auto* src, const auto* z) {
    int32_t* dst = r.data<int32_t>();
    for (int64_t i = 0; i < t.numel(); ++i) {
      int64_t zi2 = 0;
      if (mode == 1) zi2 = is_a ? (i / cols) % rows : i % cols;
      if (mode == 2) zi2 = is_a ? i / cols : (i / (rows * cols)) * cols + i % cols;
      dst[i] = static_cast<int32_t>(src[i]) - (z ? static_cast<int32_t>(z[zi2]) : 0);
    }
  };
  if (t.dtype() == DType::kUInt8)
    run(t.data<uint8_t>(), has_zp ? zp.data<uint8_t>() : nullptr);
  else
    run(t.data<int8_t>(), has_zp ? zp.data<int8_t>() : nullptr);
  return r;
}

Status check_int8(const Tensor& t, const char* what) {
  if (t.dtype() != DType::kUInt8 && t.dtype() != DType::kInt8)
    return invalid_argument(what, " has type ", dtype_name(t.dtype()), ", expected uint8 or int8");
  return Status::Ok();
}

}  // namespace

Status gemm_op(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 2));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 2, 2));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  const float alpha = ctx.attr_float("alpha", 1.0f), beta = ctx.attr_float("beta", 1.0f);
  const int64_t M = ta ? A.dim(1) : A.dim(0), K = ta ? A.dim(0) : A.dim(1);
  const int64_t N = tb ? B.dim(0) : B.dim(1), K2 = tb ? B.dim(1) : B.dim(0);
  if (K != K2)
    return invalid_argument("inner dimensions differ: A ", shape_to_string(A.shape()), " B ",
                            shape_to_string(B.shape()), " (transA=", ta, ", transB=", tb, ")");
  const bool has_c = ctx.has_input(2);
  int64_t crs = 0, ccs = 0;
  if (has_c) {
    OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 2));
    OSPREY_RETURN_IF_ERROR(gemm_c_strides(ctx.input(2).shape(), M, N, &crs, &ccs));
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, A.dtype(), {M, N}));
  return dispatch<GemmTypes>(A.dtype(), "Gemm", [&]<class T>() {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      OSPREY_ASSIGN_OR_RETURN(Tensor af, to_float<T>(ctx, A));
      OSPREY_ASSIGN_OR_RETURN(Tensor bf, to_float<T>(ctx, B));
      Tensor cf;
      if (has_c) {
        OSPREY_ASSIGN_OR_RETURN(cf, to_float<T>(ctx, ctx.input(2)));
      }
      OSPREY_ASSIGN_OR_RETURN(Tensor yf, ctx.new_tensor(DType::kFloat32, {M, N}));
      gemm_op_run<T, float>(ta, tb, M, N, K, alpha, beta, af.data<float>(), bf.data<float>(),
                            has_c ? cf.data<float>() : nullptr, crs, ccs, yf.data<float>(), ctx.pool());
      for (int64_t i = 0; i < Y.numel(); ++i) Y.data<T>()[i] = T(yf.data<float>()[i]);
    } else {
      gemm_op_run<T, T>(ta, tb, M, N, K, alpha, beta, A.data<T>(), B.data<T>(),
                        has_c ? ctx.input(2).data<T>() : nullptr, crs, ccs, Y.data<T>(), ctx.pool());
    }
    return Status::Ok();
  });
}

Status matmul(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  MatMulShape s;
  OSPREY_RETURN_IF_ERROR(matmul_shape(A.shape(), B.shape(), &s));
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, A.dtype(), s.out));
  if (Y.numel() == 0) return Status::Ok();
  return dispatch<GemmTypes>(A.dtype(), "MatMul", [&]<class T>() {
    if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
      OSPREY_ASSIGN_OR_RETURN(Tensor af, to_float<T>(ctx, A));
      OSPREY_ASSIGN_OR_RETURN(Tensor bf, to_float<T>(ctx, B));
      OSPREY_ASSIGN_OR_RETURN(Tensor yf, ctx.new_tensor(DType::kFloat32, s.out));
      matmul_run<float>(s, af.data<float>(), bf.data<float>(), yf.data<float>(), ctx.pool());
      for (int64_t i = 0; i < Y.numel(); ++i) Y.data<T>()[i] = T(yf.data<float>()[i]);
    } else {
      matmul_run<T>(s, A.data<T>(), B.data<T>(), Y.data<T>(), ctx.pool());
    }
    return Status::Ok();
  });
}

namespace {

// MatMulInteger's operands (inputs 0 and 1, uint8 / int8) and the product's shape.
Status integer_product_shape(const KernelContext& ctx, MatMulShape* s) {
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(0), "input A"));
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(1), "input B"));
  return matmul_shape(ctx.input(0).shape(), ctx.input(1).shape(), s);
}

// The exact int32 sums of (A - a_zero_point)(B - b_zero_point) (zero points at inputs 2, 3) into y.
Status integer_product(KernelContext& ctx, const MatMulShape& s, int32_t* y) {
  OSPREY_ASSIGN_OR_RETURN(Tensor ai, subtract_zp(ctx, ctx.input(0), 2, true, "a_zero_point"));
  OSPREY_ASSIGN_OR_RETURN(Tensor bi, subtract_zp(ctx, ctx.input(1), 3, false, "b_zero_point"));
  matmul_run<int32_t>(s, ai.data<int32_t>(), bi.data<int32_t>(), y, ctx.pool());
  return Status::Ok();
}

}  // namespace

// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32.
Status matmul_integer(KernelContext& ctx) {
  MatMulShape s;
  OSPREY_RETURN_IF_ERROR(integer_product_shape(ctx, &s));
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, DType::kInt32, s.out));
  return Y.numel() > 0 ? integer_product(ctx, s, Y.data<int32_t>()) : Status::Ok();
}

// com.osprey MatMulIntegerToFloat(A, B, a_zero_point?, b_zero_point?, scale, bias?) -> float32,
// made by the matmul_integer_fusion pass from a dynamically quantized model's
// MatMulInteger -> Cast(float) -> Mul(scale) [-> Add(bias)]: the same operations in the same
// order, Y = act(float(MatMulInteger(A, B, a_zero_point, b_zero_point)) * scale (+ bias)), with
// scale one value or one per column (N), bias one per column, and the attribute activation ""
// (none), "Relu", "Gelu" (erf form) or "GeluTanh". With y_scale and y_zero_point (inputs 6 and
// 7, one value each; the same pass folds a QuantizeLinear that follows) Y is that
// QuantizeLinear's result instead: saturate(round_half_even(v / y_scale) + y_zero_point), of
// y_zero_point's type.
Status matmul_integer_to_float(KernelContext& ctx) {
  const std::string act = ctx.attr_string("activation", "");
  if (!act.empty() && act != "Relu" && act != "Gelu" && act != "GeluTanh")
    return invalid_argument("activation '", act, "': MatMulIntegerToFloat takes none, Relu, Gelu or GeluTanh");
  MatMulShape s;
  OSPREY_RETURN_IF_ERROR(integer_product_shape(ctx, &s));
  if (!ctx.has_input(4)) return invalid_argument("scale (input 4) is missing");
  const Tensor& scale = ctx.input(4);
  if (scale.dtype() != DType::kFloat32 || !(scale.numel() == 1 || (scale.rank() == 1 && scale.numel() == s.N)))
    return invalid_argument("scale has type ", dtype_name(scale.dtype()), " and shape ", shape_to_string(scale.shape()),
                            "; expected float32 with one value or ", s.N, " (one per column)");
  const bool has_bias = ctx.has_input(5);
  if (has_bias && (ctx.input(5).dtype() != DType::kFloat32 || ctx.input(5).shape() != Shape{s.N}))
    return invalid_argument("bias has type ", dtype_name(ctx.input(5).dtype()), " and shape ",
                            shape_to_string(ctx.input(5).shape()), "; expected float32 [", s.N, "]");
  const bool quantized = ctx.has_input(7);
  float y_scale = 1.0f;
  int64_t y_zp = 0;
  if (quantized) {
    const Tensor &ys = ctx.input(6), &yz = ctx.input(7);
    if (!ctx.has_input(6) || ys.dtype() != DType::kFloat32 || ys.numel() != 1)
      return invalid_argument("y_scale (input 6) must be one float32 value with y_zero_point");
    OSPREY_RETURN_IF_ERROR(check_int8(yz, "y_zero_point"));
    OSPREY_RETURN_IF_ERROR(per_axis_count(yz, 0, "y_zero_point"));
    y_scale = ys.data<float>()[0];
    y_zp = yz.get_as_int64(0);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor acc, ctx.new_tensor(DType::kInt32, s.out));
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, quantized ? ctx.input(7).dtype() : DType::kFloat32, s.out));
  if (Y.numel() == 0) return Status::Ok();
  OSPREY_RETURN_IF_ERROR(integer_product(ctx, s, acc.data<int32_t>()));
  const float* sc = scale.data<float>();
  const float* bias = has_bias ? ctx.input(5).data<float>() : nullptr;
  const bool per_column = scale.numel() > 1;
  for (int64_t i = 0; i < Y.numel(); ++i) {
    const int64_t j = i % s.N;
    const float v = static_cast<float>(acc.data<int32_t>()[i]) * sc[per_column ? j : 0];
    const float u = bias ? v + bias[j] : v;
    const float y = act.empty() ? u : act == "Relu" ? std::max(u, 0.0f) : act == "Gelu" ? gelu_erf(u) : gelu_tanh(u);
    if (!quantized) {
      Y.data<float>()[i] = y;
      continue;
    }
    const double q = static_cast<double>(std::nearbyint(y / y_scale)) + static_cast<double>(y_zp);
    if (Y.dtype() == DType::kUInt8) Y.data<uint8_t>()[i] = saturate_round<uint8_t>(q);
    else Y.data<int8_t>()[i] = saturate_round<int8_t>(q);
  }
  return Status::Ok();
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp).
Status qlinear_matmul(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return invalid_argument("QLinearMatMul needs 8 inputs");
  for (int i = 0; i < 8; ++i)
    if (!ctx.has_input(i)) return invalid_argument("input ", i, " is missing");
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(3);
  OSPREY_RETURN_IF_ERROR(check_int8(A, "input a"));
  OSPREY_RETURN_IF_ERROR(check_int8(B, "input b"));
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(7), "y_zero_point"));
  MatMulShape s;
  OSPREY_RETURN_IF_ERROR(matmul_shape(A.shape(), B.shape(), &s));
  // Scales: a per row (M) of a, b per column (N) of b, y per tensor.
  const int64_t counts[3] = {s.M, s.N, 0};
  const int scale_idx[3] = {1, 4, 6};
  const char* names[3] = {"a_scale", "b_scale", "y_scale"};
  std::vector<float> sc[3];
  for (int k = 0; k < 3; ++k) {
    const Tensor& t = ctx.input(scale_idx[k]);
    // Opset 21 also takes float16 and bfloat16 scales (read as float32, which holds them exactly).
    const bool half = ctx.opset() >= 21 && (t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16);
    if (t.dtype() != DType::kFloat32 && !half)
      return invalid_argument(names[k], " has type ", dtype_name(t.dtype()), ", expected float32",
                              ctx.opset() >= 21 ? ", float16 or bfloat16" : "");
    OSPREY_RETURN_IF_ERROR(per_axis_count(t, counts[k], names[k]));
    sc[k].resize(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i) sc[k][static_cast<size_t>(i)] = static_cast<float>(t.get_as_double(i));
  }
  const Tensor& yzp = ctx.input(7);
  OSPREY_RETURN_IF_ERROR(per_axis_count(yzp, 0, "y_zero_point"));
  const int64_t zy = yzp.get_as_int64(0);
  OSPREY_ASSIGN_OR_RETURN(Tensor ai, subtract_zp(ctx, A, 2, true, "a_zero_point"));
  OSPREY_ASSIGN_OR_RETURN(Tensor bi, subtract_zp(ctx, B, 5, false, "b_zero_point"));
  OSPREY_ASSIGN_OR_RETURN(Tensor acc, ctx.new_tensor(DType::kInt32, s.out));
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output(0, yzp.dtype(), s.out));
  if (Y.numel() == 0) return Status::Ok();
  matmul_run<int32_t>(s, ai.data<int32_t>(), bi.data<int32_t>(), acc.data<int32_t>(), ctx.pool());
  auto requantize = [&]<class Q>(Q* y) {
    const int32_t* a = acc.data<int32_t>();
    for (int64_t i = 0; i < Y.numel(); ++i) {
      const int64_t n = i % s.N, m = (i / s.N) % s.M;
      const float scale = sc[0][sc[0].size() > 1 ? static_cast<size_t>(m) : 0] *
                          sc[1][sc[1].size() > 1 ? static_cast<size_t>(n) : 0] / sc[2][0];
      y[i] = saturate_round<Q>(
          static_cast<double>(std::nearbyint(static_cast<float>(a[i]) * scale)) + static_cast<double>(zy));
    }
  };
  if (Y.dtype() == DType::kUInt8) requantize(Y.data<uint8_t>());
  else requantize(Y.data<int8_t>());
  return Status::Ok();
}

}  // namespace osprey::ref
