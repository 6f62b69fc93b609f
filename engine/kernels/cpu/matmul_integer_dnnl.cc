// MatMulInteger (ONNX, opset 10+) on oneDNN's int8 matmul: uint8 or int8 A with a per-tensor
// a_zero_point given at run time (the DynamicQuantizeLinear output that dynamically quantized
// models feed it), a constant int8 B of rank 2 (a linear layer's weights, packed once per shape)
// with zero points of 0 (the symmetric weights quantizers emit), int32 accumulation with
// AVX512-VNNI / AVX-VNNI. A's batch dims fold into the product's rows. The sums are exact, so
// the results are the reference's bit for bit.
// Other forms (B not constant, not int8 or not 2-D; non-zero b_zero_point; per-row a_zero_point)
// run on the reference (gemm.cc), as does every node where oneDNN has no VNNI (its int8 kernels
// then sum pairs of products in saturating int16, wrong for full-range values) or cannot create
// the primitive.
#include <atomic>

#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;

std::atomic<int64_t> g_int8_matmuls_built{0};

struct MatMulIntegerEntry {
  dnnl::matmul prim;
  memory::desc a_md, y_md, zp_md, scratch_md;
  memory weights;  // B packed for the primitive
};

struct MatMulIntegerState final : KernelState {
  bool ready = false;  // false: this node runs on the reference
  Tensor b;            // int8 [K, N]
  Tensor b_zero;       // b_zero_point when given (zeros), to recognise it at run time
  ShapeCache<MatMulIntegerEntry> cache;
};

bool is_int8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

memory::data_type dnnl_type(DType t) {
  return t == DType::kUInt8 ? memory::data_type::u8 : memory::data_type::s8;
}

// Ready when B is a constant int8 matrix whose zero points (if given) are constant zeros.
std::shared_ptr<MatMulIntegerState> make_state(const KernelContext& ctx) {
  auto st = std::make_shared<MatMulIntegerState>();
  if (!int8_vnni_available() || !ctx.has_input(1) || !ctx.input_value(1).is_tensor()) return st;
  const Tensor& b = ctx.input(1);
  if (b.dtype() != DType::kInt8 || b.rank() != 2 || b.numel() == 0) return st;
  if (ctx.has_input(3)) {
    const Tensor& bz = ctx.input(3);
    if (!ctx.input_value(3).is_tensor() || bz.dtype() != DType::kInt8) return st;
    for (int64_t i = 0; i < bz.numel(); ++i)
      if (bz.get_as_int64(i) != 0) return st;
    st->b_zero = bz;
  } else if (ctx.node().inputs.size() > 3 && ctx.node().inputs[3] != ir::kNoValue) {
    return st;  // b_zero_point comes at run time
  }
  st->b = b;
  st->ready = true;
  return st;
}

// The primitive for A of `rows` x K rows (A's batch dims folded) and element type a_type.
Result<std::shared_ptr<const MatMulIntegerEntry>> build(const MatMulIntegerState& st, int64_t rows,
                                                       DType a_type, int threads) {
  const int64_t K = st.b.dim(0), N = st.b.dim(1);
  auto e = std::make_shared<MatMulIntegerEntry>();
  e->a_md = memory::desc({rows, K}, dnnl_type(a_type), memory::format_tag::ab);
  e->y_md = memory::desc({rows, N}, memory::data_type::s32, memory::format_tag::ab);
  e->zp_md = memory::desc({1}, memory::data_type::s32, memory::format_tag::a);
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  use_threads(threads);
  const memory::desc b_any({K, N}, memory::data_type::s8, memory::format_tag::any);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(e->a_md, b_any, e->y_md), attr, dnnl_engine(),
                                  /*allow_empty=*/true);
  if (!pd) return unimplemented("oneDNN has no int8 matmul for this node");
  e->prim = dnnl::matmul(pd);
  e->scratch_md = pd.scratchpad_desc();
  const memory::desc b_plain({K, N}, memory::data_type::s8, memory::format_tag::ab);
  e->weights = memory(pd.weights_desc(), dnnl_engine());
  run_reorder(make_reorder(b_plain, pd.weights_desc()), wrap(b_plain, st.b.raw_data()), e->weights);
  g_int8_matmuls_built.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<const MatMulIntegerEntry>(e);
}

Result<std::shared_ptr<const MatMulIntegerEntry>> entry_for(MatMulIntegerState& st, int64_t rows,
                                                           DType a_type, int threads) {
  thread_local std::vector<int64_t> key;
  key.assign({threads, static_cast<int64_t>(a_type), rows});
  return st.cache.get(key, [&] { return build(st, rows, a_type, threads); });
}

// a_zero_point as one int32 (absent: 0), or false when it is not a per-tensor value of A's type.
bool scalar_a_zero_point(const KernelContext& ctx, DType a_type, int32_t* zp) {
  *zp = 0;
  if (!ctx.has_input(2)) return true;
  if (!ctx.input_value(2).is_tensor()) return false;
  const Tensor& z = ctx.input(2);
  if (z.dtype() != a_type || z.numel() != 1 || z.rank() > 1) return false;
  *zp = static_cast<int32_t>(z.get_as_int64(0));
  return true;
}

}  // namespace

int64_t int8_matmuls_built() { return g_int8_matmuls_built.load(std::memory_order_relaxed); }

Result<std::shared_ptr<KernelState>> prepare_matmul_integer(const KernelContext& ctx) {
  auto st = make_state(ctx);
  Shape hint;
  if (st->ready && ctx.shape_hint(0, &hint) && hint.size() >= 2 && hint.back() == st->b.dim(0)) {
    const int64_t rows = shape_numel(hint) / hint.back();
    auto e = guarded("int8 matmul", [&]() -> Status {
      return entry_for(*st, rows, DType::kUInt8, kernel_threads(ctx)).status();
    });
    if (!e.ok() && e.code() == StatusCode::kUnimplemented) st->ready = false;
  }
  return std::shared_ptr<KernelState>(std::move(st));
}

Status matmul_integer(KernelContext& ctx) {
  auto* st = dynamic_cast<MatMulIntegerState*>(ctx.state());
  if (!st || !st->ready || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      ctx.input(1).raw_data() != st->b.raw_data() ||
      (ctx.has_input(3) && ctx.input(3).raw_data() != st->b_zero.raw_data()))
    return ref::matmul_integer(ctx);
  const Tensor& a = ctx.input(0);
  int32_t a_zp = 0;
  const int64_t K = st->b.dim(0), N = st->b.dim(1);
  if (!is_int8(a.dtype()) || a.rank() < 2 || a.shape().back() != K || a.numel() == 0 ||
      !scalar_a_zero_point(ctx, a.dtype(), &a_zp))
    return ref::matmul_integer(ctx);  // other forms (empty A too), and the reference's errors
  const int64_t rows = a.numel() / K;
  const int threads = kernel_threads(ctx);
  std::shared_ptr<const MatMulIntegerEntry> e;
  const Status made = guarded("int8 matmul", [&]() -> Status {
    auto r = entry_for(*st, rows, a.dtype(), threads);
    if (r.ok()) e = *r;
    return r.status();
  });
  if (made.code() == StatusCode::kUnimplemented) return ref::matmul_integer(ctx);
  OSPREY_RETURN_IF_ERROR(made);
  Shape out = a.shape();
  out.back() = N;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, DType::kInt32, out));
  if (y.numel() == 0) return Status::Ok();
  return guarded("int8 matmul", [&]() -> Status {
    use_threads(threads);
    execute(e->prim,
            ExecArgs{arg(DNNL_ARG_SRC, e->a_md, a.raw_data()), arg(DNNL_ARG_WEIGHTS, e->weights),
                     arg(DNNL_ARG_DST, e->y_md, y.raw_data()),
                     arg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, e->zp_md, &a_zp)},
            e->scratch_md);
    return Status::Ok();
  });
}

}  // namespace osprey::cpu
