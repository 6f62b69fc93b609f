// MatMul, Gemm and com.osprey FusedMatMul on oneDNN's matmul (float32).
// MatMul with a 2-D B (the weights of a linear layer) folds A's batch dims into M and runs one
// product, with a constant B prepacked once; other batched MatMuls run one product per batch
// (numpy broadcasting of the batch dims). Gemm maps alpha to an output scale and beta * C to a
// sum post-op (or a bias when C is a row and alpha = beta = 1). FusedMatMul adds bias, the
// residual Z and the activation inside the primitive (a Gelu just after it, see
// gelu_after_product). All of them honour compute_precision
// (see matmul_core.h). A FusedMatMul in bf16 compute with bf16_input = 1 takes A as bfloat16,
// one with bf16_output = 1 (and no Z) writes Y as bfloat16 (the compute_precision pass sets
// them where one fast-mode product feeds only others).
#include <cstring>

#include "kernels/cpu/matmul_core.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/common.h"

namespace osprey::cpu {
namespace {

Result<MatMulState*> state_or(KernelContext& ctx, std::shared_ptr<MatMulState>& local,
                              int b_index) {
  if (auto* st = dynamic_cast<MatMulState*>(ctx.state())) return st;
  OSPREY_ASSIGN_OR_RETURN(local, make_matmul_state(ctx, b_index));
  local->weights = Tensor();  // nothing to reuse outside a session: no prepacking
  local->weights_data = nullptr;
  return local.get();
}

// FusedMatMul's bf16_input / bf16_output into the state, once (prepare, or the stateless run).
Status read_bf16_io(const KernelContext& ctx, MatMulState* st) {
  for (auto [name, flag] : {std::pair{"bf16_input", &st->a_bf16}, std::pair{"bf16_output", &st->y_bf16}}) {
    const int64_t v = ctx.attr_int(name, 0);
    if (v != 0 && v != 1) return invalid_argument("attribute ", name, " must be 0 or 1, got ", v);
    if (v == 1 && !st->bf16)
      return invalid_argument("attribute ", name, " = 1 needs compute_precision = \"bf16\"");
    *flag = v == 1;
  }
  return Status::Ok();
}

// The Gelu of a product (gelu_after_product) over Y in place, in chunks across
// the session's threads.
void gelu_after(const KernelContext& ctx, Tensor& Y, bool tanh_form) {
  constexpr int64_t kChunk = 4096;  // elements per task
  const int64_t n = Y.numel(), chunks = (n + kChunk - 1) / kChunk;
  const bool bf16 = Y.dtype() == DType::kBFloat16;
  const size_t elem = bf16 ? 2 : 4;
  char* y = static_cast<char*>(Y.raw_data());
  const VectorIsa isa = best_vector_isa();
  ctx.parallel_for(chunks, kChunk * 8, [&](int64_t b, int64_t e) {
    const int64_t first = b * kChunk, last = std::min(n, e * kChunk);
    gelu_fast_inplace(isa, y + static_cast<size_t>(first) * elem, last - first, bf16, tanh_form);
  });
}

Status check_k(int64_t K, const char* op) {
  if (K == 0) return unimplemented(op, " with an empty inner dimension (K = 0)");
  return Status::Ok();
}

}  // namespace

Status matmul(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_f32(ctx, 0, "A"));
  OSPREY_RETURN_IF_ERROR(require_f32(ctx, 1, "B"));
  if (!ctx.has_input(0) || !ctx.has_input(1)) return invalid_argument("A and B are required");
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  if (A.rank() < 1 || B.rank() < 1) return invalid_argument("MatMul operands must have rank >= 1");
  Shape a = A.shape(), b = B.shape();
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  if (b[b.size() - 2] != K)
    return invalid_argument("MatMul inner dimensions differ: ", shape_to_string(A.shape()), " x ",
                            shape_to_string(B.shape()));
  const Shape ab(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
  Shape batch;
  OSPREY_RETURN_IF_ERROR(ref::broadcast_shapes({ab, bb}, &batch));
  Shape out = batch;
  if (A.rank() > 1) out.push_back(M);
  if (B.rank() > 1) out.push_back(N);
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output_uninitialized(0, DType::kFloat32, out));
  if (Y.numel() == 0) return Status::Ok();
  if (K == 0) {  // a sum of nothing is 0
    std::memset(Y.raw_data(), 0, Y.nbytes());
    return Status::Ok();
  }
  std::shared_ptr<MatMulState> local;
  OSPREY_ASSIGN_OR_RETURN(MatMulState * st, state_or(ctx, local, 1));
  const int threads = kernel_threads(ctx);
  bool b_single = true;
  for (int64_t v : bb) b_single = b_single && v == 1;
  const int64_t batches = shape_numel(batch);
  if (b_single && ab == batch) {  // one B for every batch: fold the batch into M
    Product2D p;
    p.M = batches * M;
    p.K = K;
    p.N = N;
    return run_product(*st, p, threads, B, A.data<float>(), B.data<float>(), nullptr,
                       Y.data<float>());
  }
  Product2D p;
  p.M = M;
  p.K = K;
  p.N = N;
  std::vector<const float*> ap, bp;
  std::vector<float*> yp;
  ref::StridedIter it(batch,
                      {ref::broadcast_strides(ab, batch), ref::broadcast_strides(bb, batch)});
  for (int64_t i = 0; i < batches; ++i, it.next()) {
    ap.push_back(A.data<float>() + it.offset(0) * M * K);
    bp.push_back(B.data<float>() + it.offset(1) * K * N);
    yp.push_back(Y.data<float>() + i * M * N);
  }
  return run_products(*st, p, threads, ap, bp, yp);
}

Status fused_matmul(KernelContext& ctx) {
  std::shared_ptr<MatMulState> local;
  MatMulState* st = dynamic_cast<MatMulState*>(ctx.state());
  Activation act;
  if (!st) {
    OSPREY_RETURN_IF_ERROR(read_activation(ctx, &act));
    OSPREY_ASSIGN_OR_RETURN(st, state_or(ctx, local, 1));
    st->act = act;
    OSPREY_RETURN_IF_ERROR(read_bf16_io(ctx, st));
  }
  if (!ctx.has_input(0) || !ctx.has_input(1)) return invalid_argument("A and B are required");
  Product2D p;
  p.a_bf16 = st->a_bf16;
  p.y_bf16 = st->y_bf16;
  if (p.y_bf16 && ctx.has_input(3))
    return invalid_argument("bf16_output = 1 takes no residual Z (the sum would start from float32)");
  if (p.a_bf16) {
    if (!ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kBFloat16)
      return invalid_argument("A must be a bfloat16 tensor (bf16_input = 1)");
  } else {
    OSPREY_RETURN_IF_ERROR(require_f32(ctx, 0, "A"));
  }
  for (int i = 1; i < 4; ++i)
    OSPREY_RETURN_IF_ERROR(require_f32(ctx, i, i == 1 ? "B" : i == 2 ? "bias" : "residual Z"));
  const int64_t trans_b = ctx.attr_int("trans_b", 0);
  if (trans_b != 0 && trans_b != 1) return invalid_argument("trans_b must be 0 or 1");
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  if (A.rank() < 1) return invalid_argument("A must have rank >= 1, got a scalar");
  if (B.rank() != 2) return invalid_argument("B must be 2-D, got ", shape_to_string(B.shape()));
  p.trans_b = trans_b != 0;
  p.K = A.dim(A.rank() - 1);
  p.N = p.trans_b ? B.dim(0) : B.dim(1);
  if ((p.trans_b ? B.dim(1) : B.dim(0)) != p.K)
    return invalid_argument("inner dimensions differ: A ", shape_to_string(A.shape()), ", B ",
                            shape_to_string(B.shape()), p.trans_b ? " (transposed)" : "");
  Shape out(A.shape().begin(), A.shape().end() - 1);
  out.push_back(p.N);
  p.M = shape_numel(Shape(out.begin(), out.end() - 1));
  p.has_bias = ctx.has_input(2);
  if (p.has_bias && (ctx.input(2).rank() != 1 || ctx.input(2).dim(0) != p.N))
    return invalid_argument("bias has shape ", shape_to_string(ctx.input(2).shape()),
                            ", expected [", p.N, "]");
  if (ctx.has_input(3) && ctx.input(3).shape() != out)
    return invalid_argument("residual Z has shape ", shape_to_string(ctx.input(3).shape()),
                            ", expected the output shape ", shape_to_string(out));
  // The residual Z is the product's starting value (beta = 1): Y takes over its bytes when
  // nothing reads Z after this node, and is a copy of it otherwise.
  const bool has_z = ctx.has_input(3);
  const DType y_type = p.y_bf16 ? DType::kBFloat16 : DType::kFloat32;
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, has_z ? ctx.new_output_over_input(0, 3, y_type, out)
                                          : ctx.new_output_uninitialized(0, y_type, out));
  if (Y.numel() == 0) return Status::Ok();
  OSPREY_RETURN_IF_ERROR(check_k(p.K, "FusedMatMul"));
  if (has_z) {
    if (Y.raw_data() != ctx.input(3).raw_data()) std::memcpy(Y.raw_data(), ctx.input(3).raw_data(), Y.nbytes());
    p.beta = 1.0f;
  }
  OSPREY_RETURN_IF_ERROR(run_product(*st, p, kernel_threads(ctx), B, A.raw_data(), B.data<float>(),
                                     p.has_bias ? ctx.input(2).data<float>() : nullptr, Y.raw_data()));
  if (gelu_after_product(*st)) gelu_after(ctx, Y, st->act.name == "GeluTanh");
  return Status::Ok();
}

Status gemm(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return invalid_argument("A and B are required");
  for (int i = 0; i < 3; ++i)
    OSPREY_RETURN_IF_ERROR(require_f32(ctx, i, i == 0 ? "A" : i == 1 ? "B" : "C"));
  const Tensor& A = ctx.input(0);
  const Tensor& B = ctx.input(1);
  if (A.rank() != 2 || B.rank() != 2)
    return invalid_argument("Gemm takes 2-D A and B, got ", shape_to_string(A.shape()), " and ",
                            shape_to_string(B.shape()));
  Product2D p;
  p.trans_a = ctx.attr_int("transA", 0) != 0;
  p.trans_b = ctx.attr_int("transB", 0) != 0;
  p.alpha = ctx.attr_float("alpha", 1.0f);
  const float beta = ctx.attr_float("beta", 1.0f);
  p.M = p.trans_a ? A.dim(1) : A.dim(0);
  p.K = p.trans_a ? A.dim(0) : A.dim(1);
  p.N = p.trans_b ? B.dim(0) : B.dim(1);
  if ((p.trans_b ? B.dim(1) : B.dim(0)) != p.K)
    return invalid_argument("inner dimensions differ: A ", shape_to_string(A.shape()), " B ",
                            shape_to_string(B.shape()), " (transA=", p.trans_a,
                            ", transB=", p.trans_b, ")");
  // C broadcast to [M, N]: row stride rs and column stride cs (0 = broadcast).
  const bool use_c = ctx.has_input(2) && beta != 0.0f;
  int64_t rs = 0, cs = 0;
  if (ctx.has_input(2)) {
    Shape c = ctx.input(2).shape();
    if (c.size() > 2) return invalid_argument("input C has rank ", c.size(), ", expected <= 2");
    while (c.size() < 2) c.insert(c.begin(), 1);
    if ((c[0] != 1 && c[0] != p.M) || (c[1] != 1 && c[1] != p.N))
      return invalid_argument("input C ", shape_to_string(ctx.input(2).shape()),
                              " cannot be broadcast to [", p.M, ",", p.N, "]");
    rs = c[0] == 1 ? 0 : c[1];
    cs = c[1] == 1 ? 0 : 1;
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor Y, ctx.new_output_uninitialized(0, DType::kFloat32, {p.M, p.N}));
  if (Y.numel() == 0) return Status::Ok();
  OSPREY_RETURN_IF_ERROR(check_k(p.K, "Gemm"));
  std::shared_ptr<MatMulState> local;
  OSPREY_ASSIGN_OR_RETURN(MatMulState * st, state_or(ctx, local, 1));
  const float* c = use_c ? ctx.input(2).data<float>() : nullptr;
  if (use_c && p.alpha == 1.0f && beta == 1.0f && rs == 0 && cs == 1) {
    p.has_bias = true;  // a row of N values: the primitive's bias
  } else if (use_c) {
    float* y = Y.data<float>();
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) y[i * p.N + j] = c[i * rs + j * cs];
    p.beta = beta;
    c = nullptr;
  }
  return run_product(*st, p, kernel_threads(ctx), B, A.data<float>(), B.data<float>(), c,
                     Y.data<float>());
}

// The prepare steps prepack a constant B (see prepack_weights).
Result<std::shared_ptr<KernelState>> prepare_matmul(const KernelContext& ctx) {
  OSPREY_ASSIGN_OR_RETURN(auto st, make_matmul_state(ctx, 1));
  OSPREY_RETURN_IF_ERROR(prepack_weights(*st, /*trans_b=*/false, kernel_threads(ctx)));
  return std::shared_ptr<KernelState>(std::move(st));
}

Result<std::shared_ptr<KernelState>> prepare_gemm(const KernelContext& ctx) {
  OSPREY_ASSIGN_OR_RETURN(auto st, make_matmul_state(ctx, 1));
  OSPREY_RETURN_IF_ERROR(prepack_weights(*st, ctx.attr_int("transB", 0) != 0, kernel_threads(ctx)));
  return std::shared_ptr<KernelState>(std::move(st));
}

Result<std::shared_ptr<KernelState>> prepare_fused_matmul(const KernelContext& ctx) {
  OSPREY_ASSIGN_OR_RETURN(auto st, make_matmul_state(ctx, 1));
  OSPREY_RETURN_IF_ERROR(read_activation(ctx, &st->act));
  OSPREY_RETURN_IF_ERROR(read_bf16_io(ctx, st.get()));
  OSPREY_RETURN_IF_ERROR(
      prepack_weights(*st, ctx.attr_int("trans_b", 0) != 0, kernel_threads(ctx)));
  return std::shared_ptr<KernelState>(std::move(st));
}

}  // namespace osprey::cpu
