#include "kernels/cpu/matmul_core.h"

#include <bit>
#include <cstring>
#include <optional>

namespace osprey::cpu {

using dnnl::memory;

struct MatMulEntry {
  dnnl::primitive prim;  // a matmul, or a 1x1 convolution (see conv_product_pd)
  memory::desc a_md, a_compute, b_plain, b_md, bias_md, y_md, scratch_md;
  std::optional<dnnl::reorder> a_reorder, b_reorder;  // f32 -> the primitive's type/layout
  memory packed_b;  // B in b_md when it is constant; empty otherwise
};

namespace {

memory::desc matrix_desc(int64_t rows, int64_t cols, bool transposed) {
  // [rows, cols] stored row-major, or stored as its transpose [cols, rows].
  const memory::dims strides = transposed ? memory::dims{1, rows} : memory::dims{cols, 1};
  return memory::desc({rows, cols}, memory::data_type::f32, strides);
}

}  // namespace

bool gelu_after_product(const MatMulState& st) {
  return (st.act.name == "Gelu" || st.act.name == "GeluTanh") && st.act.affine.empty();
}

namespace {

// The post-ops and attributes both primitives share: alpha, beta (sum), the activation.
dnnl::primitive_attr product_attr(const MatMulState& st, const Product2D& p) {
  dnnl::post_ops ops;
  if (p.beta != 0.0f) ops.append_sum(p.beta);
  if (!gelu_after_product(st)) append_activation(st.act, &ops);
  dnnl::primitive_attr attr;
  if (p.alpha != 1.0f) attr.set_output_scales(0, {p.alpha});
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The product as a 1x1 convolution over M pixels: A [M, K] is an nhwc source [1, K, 1, M], Y
// [M, N] an nhwc destination [1, N, 1, M], B the weights [N, K, 1, 1] in the blocked layout
// the convolution picks (packed once). Two places where that beats oneDNN's matmul:
// - Where the matmul is gemm-based (no AVX-512), its gemm repacks B on every call; jit_1x1
//   reads B packed. On AVX2, one core, interleaved: 0.7-0.97x the gemm's time at 128 rows
//   (BERT-base and MiniLM shapes), 0.23-0.64x at 1-8 rows (classifier heads), the gap widest
//   when B comes from memory rather than cache. A single output column is the exception (3.6x
//   slower hot at 128x384x1): it stays a matmul.
// - In bf16 on AMX, where the products are bound by reading B from memory: the matmul reads
//   B again for each 32-row block of A, the 1x1 convolution keeps a panel of it in cache for
//   all rows. One core of a Xeon with AMX, 128 rows, a BERT-base layer's four products with
//   B from memory (twelve layers' weights in turn): 2.0 ms against the matmul's 3.4 ms
//   (3072x768: 0.67 against 1.31 ms; at 32 rows the two are equal).
// Without `any_impl` (the state has not decided yet), only oneDNN's jit_1x1 kernel is taken, in
// bf16 its AMX brgconv_1x1; with it, whatever convolution oneDNN offers (the state's B is
// already packed for one).
std::optional<dnnl::convolution_forward::primitive_desc> conv_product_pd(const MatMulState& st,
                                                                         const Product2D& p,
                                                                         bool any_impl) {
  if (p.N < 2) return std::nullopt;
  using Tag = memory::format_tag;
  const auto f32 = memory::data_type::f32, bf16 = memory::data_type::bf16;
  const memory::desc src({1, p.K, 1, p.M}, st.bf16 ? bf16 : f32, Tag::nhwc),
      dst({1, p.N, 1, p.M}, p.y_bf16 ? bf16 : f32, Tag::nhwc);
  const memory::desc w({p.N, p.K, 1, 1}, st.bf16 ? bf16 : f32, Tag::any), bias({p.N}, f32, Tag::x);
  try {
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference,
                                      dnnl::algorithm::convolution_direct, src, w,
                                      p.has_bias ? bias : memory::desc(), dst, {1, 1}, {0, 0},
                                      {0, 0});
    dnnl::convolution_forward::primitive_desc pd(d, product_attr(st, p), dnnl_engine());
    const std::string impl = pd.impl_info_str();
    if (!any_impl && impl.rfind(st.bf16 ? "brgconv_1x1:avx512_core_amx" : "jit_1x1", 0) != 0)
      return std::nullopt;
    return pd;
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Fills e for the convolution form of the product.
void build_conv(MatMulEntry* e, const dnnl::convolution_forward::primitive_desc& pd,
                const MatMulState& st, const Product2D& p) {
  using Tag = memory::format_tag;
  const auto f32 = memory::data_type::f32, bf16 = memory::data_type::bf16;
  e->a_md = memory::desc({1, p.K, 1, p.M}, p.a_bf16 ? bf16 : f32, Tag::nhwc);
  e->a_compute = memory::desc({1, p.K, 1, p.M}, st.bf16 ? bf16 : f32, Tag::nhwc);
  e->y_md = memory::desc({1, p.N, 1, p.M}, p.y_bf16 ? bf16 : f32, Tag::nhwc);
  if (p.has_bias) e->bias_md = memory::desc({p.N}, f32, Tag::x);
  // B as the weights [N, K, 1, 1]: element (n, k) is at k * N + n, or n * K + k when stored
  // transposed.
  e->b_plain = memory::desc({p.N, p.K, 1, 1}, f32,
                            p.trans_b ? memory::dims{p.K, 1, 1, 1} : memory::dims{1, p.N, 1, 1});
  e->prim = dnnl::convolution_forward(pd);
  e->b_md = pd.weights_desc();
  e->scratch_md = pd.scratchpad_desc();
}

// The rows a float32 brgemm product needs to decide for the convolution form (the load-time
// packing decides at 128 rows; a first product with fewer keeps the matmul).
constexpr int64_t kConvProductMinRows = 32;

Result<std::shared_ptr<const MatMulEntry>> build(MatMulState& st, const Product2D& p, int threads,
                                                 bool packable) {
  auto e = std::make_shared<MatMulEntry>();
  const auto bf16 = memory::data_type::bf16;
  if ((p.a_bf16 || p.y_bf16) && (!st.bf16 || p.trans_a || (p.y_bf16 && p.beta != 0.0f)))
    return internal_error("matrix product: bfloat16 A or Y needs bf16 compute, a plain A and no sum");
  e->a_md = p.a_bf16 ? memory::desc({p.M, p.K}, bf16, memory::format_tag::ab) : matrix_desc(p.M, p.K, p.trans_a);
  e->b_plain = matrix_desc(p.K, p.N, p.trans_b);
  e->y_md = p.y_bf16 ? memory::desc({p.M, p.N}, bf16, memory::format_tag::ab) : matrix_desc(p.M, p.N, false);
  if (p.has_bias) e->bias_md = matrix_desc(1, p.N, false);
  e->a_compute = st.bf16 ? memory::desc({p.M, p.K}, bf16, memory::format_tag::ab) : e->a_md;
  memory::desc b_req =
      packable ? memory::desc({p.K, p.N}, st.bf16 ? bf16 : memory::data_type::f32,
                              memory::format_tag::any)
      : st.bf16 ? memory::desc({p.K, p.N}, bf16, memory::format_tag::ab)
                : e->b_plain;
  use_threads(threads);
  auto make_pd = [&] {
    auto desc = p.has_bias ? dnnl::matmul::desc(e->a_compute, b_req, e->bias_md, e->y_md)
                           : dnnl::matmul::desc(e->a_compute, b_req, e->y_md);
    return dnnl::matmul::primitive_desc(desc, product_attr(st, p), dnnl_engine());
  };
  dnnl::matmul::primitive_desc pd = make_pd();
  const std::string impl = pd.impl_info_str();
  const bool gemm_based = impl.rfind("gemm", 0) == 0;
  const bool amx_bf16 = st.bf16 && impl.find("amx") != std::string::npos;
  // A constant B of a gemm-based matmul, or of a bf16 one on AMX: the state's first packable
  // product decides, for all that follow (their packed forms must be reorders of one another),
  // whether B is packed as a 1x1 convolution's weights.
  // A float32 brgemm matmul (AVX-512) also runs faster as the convolution when it widens (N >=
  // K): on an Ice Lake core, B read from memory, BERT-base's 768 -> 3072, 768 -> 2304 (merged
  // Q, K, V) and 768 -> 768 products at 128 rows took 1.5-3.5% less time as brgconv_1x1
  // (osprey_tile_bench --only products), 7-10% less at 8 rows, the same at 1; a narrowing
  // 3072 -> 768 ran 1-2.5% slower inside the model. Once B is packed so, products with fewer
  // rows take that form too (rather than a second packed copy of B).
  const bool brg_widening = !st.bf16 && !gemm_based && p.N >= p.K && p.M >= kConvProductMinRows;
  std::optional<dnnl::convolution_forward::primitive_desc> conv_pd;
  const bool conv_candidate =
      st.bf16 ? amx_bf16 : (gemm_based || brg_widening || st.packed_as_conv == 1);
  if (packable && !p.trans_a && conv_candidate && st.packed_as_conv != 0)
    conv_pd = conv_product_pd(st, p, /*any_impl=*/st.packed_as_conv == 1 || brg_widening);
  if (packable && st.packed_as_conv < 0) st.packed_as_conv = conv_pd ? 1 : 0;
  if (conv_pd) {
    build_conv(e.get(), *conv_pd, st, p);
  } else {
    // The gemm-based matmul takes a constant B plain (no packed layout of its own), and with
    // more columns than rows it runs much faster on B stored transposed: BERT-base's 768x3072
    // B at 128 rows, 17.8 ms as stored [K, N] against 10.4 ms as [N, K] (AVX2, one core;
    // within 6% either way for the square and the tall products). Such a B is packed
    // transposed.
    if (gemm_based && packable && !st.bf16 && p.N >= p.K) {
      b_req = memory::desc({p.K, p.N}, memory::data_type::f32, memory::format_tag::ba);
      pd = make_pd();
    }
    e->prim = dnnl::matmul(pd);
    e->b_md = pd.weights_desc();
    e->scratch_md = pd.scratchpad_desc();
  }
  if (e->a_compute != e->a_md) e->a_reorder = make_reorder(e->a_md, e->a_compute);
  if (e->b_md != e->b_plain) e->b_reorder = make_reorder(e->b_plain, e->b_md);
  if (packable) {
    for (const auto& [md, mem] : st.packed)
      if (md == e->b_md) e->packed_b = mem;
    if (!e->packed_b) {
      if (st.weights_released) {  // only a packed form is left: reorder from it
        const auto& [from_md, from] = st.packed.front();
        e->packed_b = large_memory(e->b_md, &st.packed_storage);
        run_reorder(make_reorder(from_md, e->b_md), from, e->packed_b);
      } else if (e->b_reorder) {
        e->packed_b = large_memory(e->b_md, &st.packed_storage);
        run_reorder(*e->b_reorder, wrap(e->b_plain, st.weights.raw_data()), e->packed_b);
      } else {  // the primitive reads B as it is: hold the plain storage
        e->packed_b = wrap(e->b_plain, st.weights.raw_data());
        st.plain_held = st.weights;
      }
      st.packed.emplace_back(e->b_md, e->packed_b);
    }
  }
  return std::shared_ptr<const MatMulEntry>(e);
}

Result<std::shared_ptr<const MatMulEntry>> entry_for(MatMulState& st, const Product2D& p,
                                                     int threads, bool packable) {
  // alpha is the primitive's output scale (QLinearMatMul's can change between runs).
  const std::vector<int64_t> key = {
      threads, p.M, p.K, p.N, p.trans_a, p.trans_b, p.has_bias, p.beta != 0.0f, packable, st.bf16,
      p.a_bf16, p.y_bf16, std::bit_cast<int32_t>(p.alpha)};
  return st.cache.get(key, [&] { return build(st, p, threads, packable); });
}

void run_one(const MatMulEntry& e, const Product2D& p, const void* a, const float* b,
             const float* bias, void* y) {
  Buffer a_buf, b_buf;  // only in bf16 compute
  ExecArgs args;
  if (e.a_reorder) {
    a_buf = Buffer(e.a_compute.get_size());
    run_reorder(*e.a_reorder, e.a_md, a, e.a_compute, a_buf.data());
    args.add(arg(DNNL_ARG_SRC, e.a_compute, a_buf.data()));
  } else {
    args.add(arg(DNNL_ARG_SRC, e.a_md, a));
  }
  if (e.packed_b) {
    args.add(arg(DNNL_ARG_WEIGHTS, e.packed_b));
  } else if (e.b_reorder) {  // a computed B in bf16 compute
    b_buf = Buffer(e.b_md.get_size());
    run_reorder(*e.b_reorder, e.b_plain, b, e.b_md, b_buf.data());
    args.add(arg(DNNL_ARG_WEIGHTS, e.b_md, b_buf.data()));
  } else {
    args.add(arg(DNNL_ARG_WEIGHTS, e.b_plain, b));
  }
  args.add(arg(DNNL_ARG_DST, e.y_md, y));
  if (p.has_bias) args.add(arg(DNNL_ARG_BIAS, e.bias_md, bias));
  execute(e.prim, args, e.scratch_md);
}

}  // namespace

Result<std::shared_ptr<MatMulState>> make_matmul_state(const KernelContext& ctx, int b_index) {
  auto st = std::make_shared<MatMulState>();
  OSPREY_ASSIGN_OR_RETURN(st->bf16, read_bf16_compute(ctx));
  st->b_index = b_index;
  if (ctx.has_input(b_index) && ctx.input_value(b_index).is_tensor() &&
      ctx.input(b_index).dtype() == DType::kFloat32 && ctx.input(b_index).rank() == 2 &&
      ctx.input(b_index).numel() > 0) {
    st->weights = ctx.input(b_index);
    st->weights_data = st->weights.raw_data();
  }
  return st;
}

namespace {

// Whether a constant B is packed for panel_product: float32 compute on AVX-512, and no
// activation but a Gelu that runs after the product (panel_product has no post-ops). It then
// takes every product of the node, of any row count: on an Ice Lake core, B from memory,
// BERT-base's 128-row products ran at 152-166 GFLOP/s against oneDNN's 139-146 (0.86-0.92x
// of the time).
bool panel_form(const MatMulState& st) {
  return st.allow_panel && !st.bf16 && !st.a_bf16 && !st.y_bf16 && (st.act.name.empty() || gelu_after_product(st)) &&
         panel_product_supported();
}

// Y = alpha op(A) B (+ bias) (+ beta Y) on the state's panel-packed B; alpha and a transposed
// A are applied to a copy of A first.
Status run_panel_product(const MatMulState& st, const Product2D& p, int threads, const float* a,
                         const float* bias, float* y) {
  if (p.K != st.panel.K || p.N != st.panel.N)
    return internal_error("matrix product: B is packed as ", st.panel.K, "x", st.panel.N,
                          " but the product is ", p.K, "x", p.N);
  Buffer a_buf;
  if (p.trans_a || p.alpha != 1.0f) {
    a_buf = Buffer(static_cast<size_t>(p.M * p.K) * sizeof(float));
    float* to = static_cast<float*>(a_buf.data());
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t k = 0; k < p.K; ++k)
        to[i * p.K + k] = p.alpha * (p.trans_a ? a[k * p.M + i] : a[i * p.K + k]);
    a = to;
  }
  panel_product(st.panel, a, p.M, p.K, p.has_bias ? bias : nullptr, p.beta, y, threads);
  return Status::Ok();
}

}  // namespace

Status prepack_weights(MatMulState& st, bool trans_b, int threads) {
  if (!st.weights.defined()) return Status::Ok();
  if (panel_form(st)) {
    const int64_t K = trans_b ? st.weights.dim(1) : st.weights.dim(0);
    const int64_t N = trans_b ? st.weights.dim(0) : st.weights.dim(1);
    return guarded("prepacking B", [&]() -> Status {
      st.panel = pack_panel_b(st.weights.data<float>(), K, N, trans_b ? 1 : N, trans_b ? K : 1);
      return Status::Ok();
    });
  }
  // The layout oneDNN picks for B depends on K and N (and the ISA), not on M in practice; a
  // run whose primitive asks for another layout reorders from this one.
  constexpr int64_t kTypicalRows = 128;
  Product2D p;
  p.M = kTypicalRows;
  p.trans_b = trans_b;
  p.K = trans_b ? st.weights.dim(1) : st.weights.dim(0);
  p.N = trans_b ? st.weights.dim(0) : st.weights.dim(1);
  return guarded("prepacking B", [&]() -> Status {
    return entry_for(st, p, threads, /*packable=*/true).status();
  });
}

Status run_product(MatMulState& st, const Product2D& p, int threads, const Tensor& b_tensor,
                   const void* a, const float* b, const float* bias, void* y) {
  const bool packable = st.weights_released
                            ? is_released_constant(b_tensor)
                            : st.weights.defined() && st.weights_data == b_tensor.raw_data() &&
                                  st.weights.numel() == p.K * p.N;
  if (is_released_constant(b_tensor) && !packable)
    return internal_error("matrix product: B was released but is not held packed");
  if (packable && st.panel.data)
    return run_panel_product(st, p, threads, static_cast<const float*>(a), bias, static_cast<float*>(y));
  return guarded("matrix product", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, entry_for(st, p, threads, packable));
    use_threads(threads);
    run_one(*e, p, a, b, bias, y);
    return Status::Ok();
  });
}

Status run_products(MatMulState& st, const Product2D& p, int threads,
                    const std::vector<const float*>& a, const std::vector<const float*>& b,
                    const std::vector<float*>& y) {
  return guarded("matrix product", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, entry_for(st, p, threads, /*packable=*/false));
    use_threads(threads);
    for (size_t i = 0; i < y.size(); ++i) run_one(*e, p, a[i], b[i], nullptr, y[i]);
    return Status::Ok();
  });
}

}  // namespace osprey::cpu
