// MatMulInteger (ONNX, opset 10+) and com.osprey MatMulIntegerToFloat (MatMulInteger -> Cast ->
// Mul(scale) [-> Add(bias)] [-> activation], fused by matmul_integer_fusion) on oneDNN's int8
// matmul: uint8 or int8 A with a per-tensor a_zero_point given at run time (the
// DynamicQuantizeLinear output that dynamically quantized models feed it), a constant B of
// rank 2 (a linear layer's weights, packed once per shape): int8 with any per-tensor zero point
// (0 for the symmetric weights quantizers emit by default), or uint8, stored as int8 values -
// 128 with the zero point moved with them; int32 accumulation with AVX512-VNNI / AVX-VNNI. A's
// batch dims fold into the product's rows. The sums are exact, so MatMulInteger's results are
// the reference's bit for bit. MatMulIntegerToFloat writes float32: the int32 sums converted to
// float, times the scale (a run-time value, or one per column: the model computes it from A's
// dynamic scale) as a binary-multiply post-op, plus the constant bias as a binary-add one: the
// reference's operations in its order (a run-time output scale instead would move oneDNN 2.6
// from its brgemm kernels to a slower gemm one), bit for bit; then the activation (Relu, or
// Gelu in its erf or tanh form) as an eltwise post-op, oneDNN's formula (within a few float
// roundings of the reference's). With y_scale and y_zero_point (constants; a QuantizeLinear the
// pass folded in) it writes the quantized bytes: the result divided by y_scale (a binary-divide
// post-op: QuantizeLinear's division), rounded half to even, plus the zero point, converted
// with saturation — exact from the rounding on, so bit for bit the reference's.
// Other forms (B not constant or not 2-D; per-column b_zero_point that differ; per-row
// a_zero_point) run on the reference (gemm.cc), as does every node where oneDNN has no VNNI
// (its int8 kernels then sum pairs of products in saturating int16, wrong for full-range
// values) or cannot create the primitive.
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
  memory::desc a_md, y_md, zp_md, scale_md, bias_md, y_scale_md, scratch_md;
  int y_scale_post_op = -1;  // the binary-divide post-op's index (quantized output)
  memory weights;  // B packed for the primitive
};

struct MatMulIntegerState final : KernelState {
  bool ready = false;     // false: this node runs on the reference
  bool to_float = false;  // MatMulIntegerToFloat
  Tensor b_source;        // B as the model gives it (int8 or uint8 [K, N]), to recognise it
  Tensor b;               // B as int8: b_source, or uint8 values - 128
  int32_t b_zp = 0;       // B's zero point in b's terms
  Tensor b_zero;          // b_zero_point when given, to recognise it at run time
  Tensor bias;            // MatMulIntegerToFloat's constant bias [N], when it has one
  Activation act;         // and its activation (none, Relu, Gelu, GeluTanh)
  Tensor y_scale, y_zero;  // a quantized output's constant y_scale and y_zero_point
  ShapeCache<MatMulIntegerEntry> cache;
};

bool is_int8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

memory::data_type dnnl_type(DType t) {
  return t == DType::kUInt8 ? memory::data_type::u8 : memory::data_type::s8;
}

// Ready when B is a constant int8 or uint8 matrix with a constant per-tensor zero point (or
// none, or per-column zeros). uint8 B is stored as int8 (b - 128, its zero point - 128 with
// it): the differences b - zp, all that the product reads, stay the same.
std::shared_ptr<MatMulIntegerState> make_state(const KernelContext& ctx) {
  auto st = std::make_shared<MatMulIntegerState>();
  if (!int8_vnni_available() || !ctx.has_input(1) || !ctx.input_value(1).is_tensor()) return st;
  const Tensor& b = ctx.input(1);
  if (!is_int8(b.dtype()) || b.rank() != 2 || b.numel() == 0) return st;
  int32_t zp = 0;
  if (ctx.has_input(3)) {
    const Tensor& bz = ctx.input(3);
    if (!ctx.input_value(3).is_tensor() || bz.dtype() != b.dtype() || bz.numel() < 1) return st;
    zp = static_cast<int32_t>(bz.get_as_int64(0));
    for (int64_t i = 1; i < bz.numel(); ++i)  // per column: only when all are equal
      if (bz.get_as_int64(i) != zp) return st;
    if (bz.numel() > 1 && (bz.rank() != 1 || bz.numel() != b.dim(1))) return st;
    st->b_zero = bz;
  } else if (ctx.node().inputs.size() > 3 && ctx.node().inputs[3] != ir::kNoValue) {
    return st;  // b_zero_point comes at run time
  }
  st->b_source = b;
  if (b.dtype() == DType::kUInt8) {
    Tensor s8(DType::kInt8, b.shape());
    const auto* src = b.data<uint8_t>();
    auto* dst = s8.data<int8_t>();
    for (int64_t i = 0; i < b.numel(); ++i) dst[i] = static_cast<int8_t>(static_cast<int32_t>(src[i]) - 128);
    st->b = s8;
    zp -= 128;
  } else {
    st->b = b;
  }
  st->b_zp = zp;
  st->to_float = ctx.node().op_type == "MatMulIntegerToFloat";
  if (st->to_float) {
    if (!read_activation(ctx, &st->act).ok() || !st->act.affine.empty()) return st;  // the reference's error
    const std::string& a = st->act.name;
    if (!a.empty() && a != "Relu" && a != "Gelu" && a != "GeluTanh") return st;
  }
  if (st->to_float && ctx.has_input(5)) {
    const Tensor& bias = ctx.input(5);
    if (!ctx.input_value(5).is_tensor() || bias.dtype() != DType::kFloat32 || bias.shape() != Shape{b.dim(1)})
      return st;
    st->bias = bias;
  } else if (st->to_float && ctx.node().inputs.size() > 5 && ctx.node().inputs[5] != ir::kNoValue) {
    return st;  // the bias comes at run time
  }
  if (st->to_float && ctx.has_input(7)) {  // quantized output: constant parameters only
    if (!ctx.has_input(6) || !ctx.input_value(6).is_tensor() || !ctx.input_value(7).is_tensor()) return st;
    const Tensor &ys = ctx.input(6), &yz = ctx.input(7);
    if (ys.dtype() != DType::kFloat32 || ys.numel() != 1 || !is_int8(yz.dtype()) || yz.numel() != 1) return st;
    st->y_scale = ys;
    st->y_zero = yz;
  } else if (st->to_float && ctx.node().inputs.size() > 7 && ctx.node().inputs[7] != ir::kNoValue) {
    return st;  // y_zero_point comes at run time
  }
  st->ready = true;
  return st;
}

// The primitive for A of `rows` x K rows (A's batch dims folded) and element type a_type;
// MatMulIntegerToFloat's with `scales` output scales (1, or one per column).
Result<std::shared_ptr<const MatMulIntegerEntry>> build(const MatMulIntegerState& st, int64_t rows,
                                                       DType a_type, int64_t scales, int threads) {
  const int64_t K = st.b.dim(0), N = st.b.dim(1);
  auto e = std::make_shared<MatMulIntegerEntry>();
  e->a_md = memory::desc({rows, K}, dnnl_type(a_type), memory::format_tag::ab);
  const bool quantized = st.y_zero.defined();
  e->y_md = memory::desc({rows, N},
                         quantized     ? dnnl_type(st.y_zero.dtype())
                         : st.to_float ? memory::data_type::f32
                                       : memory::data_type::s32,
                         memory::format_tag::ab);
  e->zp_md = memory::desc({1}, memory::data_type::s32, memory::format_tag::a);
  dnnl::primitive_attr attr;
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  if (st.b_zp != 0) attr.set_zero_points(DNNL_ARG_WEIGHTS, 0, {st.b_zp});
  if (st.to_float) {  // binary post-ops (a run-time output scale would leave brgemm for gemm:jit)
    e->scale_md = memory::desc({1, scales}, memory::data_type::f32, memory::format_tag::ab);
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_mul, e->scale_md);
    if (st.bias.defined()) {
      e->bias_md = memory::desc({1, N}, memory::data_type::f32, memory::format_tag::ab);
      ops.append_binary(dnnl::algorithm::binary_add, e->bias_md);
    }
    append_activation(st.act, &ops);
    if (quantized) {  // / y_scale, round half to even, + y_zero_point (then the saturating conversion)
      e->y_scale_md = memory::desc({1, 1}, memory::data_type::f32, memory::format_tag::ab);
      e->y_scale_post_op = ops.len();
      ops.append_binary(dnnl::algorithm::binary_div, e->y_scale_md);
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_round, 0.0f, 0.0f);
      ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, 1.0f, static_cast<float>(st.y_zero.get_as_int64(0)));
    }
    attr.set_post_ops(ops);
  }
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
                                                           DType a_type, int64_t scales, int threads) {
  thread_local std::vector<int64_t> key;
  key.assign({threads, static_cast<int64_t>(a_type), rows, scales});
  return st.cache.get(key, [&] { return build(st, rows, a_type, scales, threads); });
}

// MatMulIntegerToFloat's scale: float32, one value or one per column (its count), else 0.
int64_t scale_count(const KernelContext& ctx, int64_t N) {
  if (!ctx.has_input(4) || !ctx.input_value(4).is_tensor()) return 0;
  const Tensor& s = ctx.input(4);
  if (s.dtype() != DType::kFloat32) return 0;
  if (s.numel() == 1) return 1;
  return s.rank() == 1 && s.numel() == N ? N : 0;
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

Status fallback(KernelContext& ctx) {
  return ctx.node().op_type == "MatMulIntegerToFloat" ? ref::matmul_integer_to_float(ctx) : ref::matmul_integer(ctx);
}

}  // namespace

int64_t int8_matmuls_built() { return g_int8_matmuls_built.load(std::memory_order_relaxed); }

Result<std::shared_ptr<KernelState>> prepare_matmul_integer(const KernelContext& ctx) {
  auto st = make_state(ctx);
  Shape hint;
  if (st->ready && ctx.shape_hint(0, &hint) && hint.size() >= 2 && hint.back() == st->b.dim(0)) {
    const int64_t rows = shape_numel(hint) / hint.back();
    auto e = guarded("int8 matmul", [&]() -> Status {
      return entry_for(*st, rows, DType::kUInt8, 1, kernel_threads(ctx)).status();
    });
    if (!e.ok() && e.code() == StatusCode::kUnimplemented) st->ready = false;
  }
  return std::shared_ptr<KernelState>(std::move(st));
}

Status matmul_integer(KernelContext& ctx) {
  auto* st = dynamic_cast<MatMulIntegerState*>(ctx.state());
  if (!st || !st->ready || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      ctx.input(1).raw_data() != st->b_source.raw_data() ||
      (ctx.has_input(3) && ctx.input(3).raw_data() != st->b_zero.raw_data()) ||
      (st->to_float && ctx.has_input(5) != st->bias.defined()) ||
      (st->bias.defined() && ctx.input(5).raw_data() != st->bias.raw_data()) ||
      (st->to_float && ctx.has_input(7) != st->y_zero.defined()) ||
      (st->y_zero.defined() && (ctx.input(7).raw_data() != st->y_zero.raw_data() ||
                                ctx.input(6).raw_data() != st->y_scale.raw_data())))
    return fallback(ctx);
  const Tensor& a = ctx.input(0);
  int32_t a_zp = 0;
  const int64_t K = st->b.dim(0), N = st->b.dim(1);
  if (!is_int8(a.dtype()) || a.rank() < 2 || a.shape().back() != K || a.numel() == 0 ||
      !scalar_a_zero_point(ctx, a.dtype(), &a_zp))
    return fallback(ctx);  // other forms (empty A too), and the reference's errors
  const int64_t scales = st->to_float ? scale_count(ctx, N) : 1;
  if (scales == 0) return fallback(ctx);
  const int64_t rows = a.numel() / K;
  const int threads = kernel_threads(ctx);
  std::shared_ptr<const MatMulIntegerEntry> e;
  const Status made = guarded("int8 matmul", [&]() -> Status {
    auto r = entry_for(*st, rows, a.dtype(), scales, threads);
    if (r.ok()) e = *r;
    return r.status();
  });
  if (made.code() == StatusCode::kUnimplemented) return fallback(ctx);
  OSPREY_RETURN_IF_ERROR(made);
  Shape out = a.shape();
  out.back() = N;
  const DType y_type = st->y_zero.defined() ? st->y_zero.dtype() : st->to_float ? DType::kFloat32 : DType::kInt32;
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, y_type, out));
  if (y.numel() == 0) return Status::Ok();
  return guarded("int8 matmul", [&]() -> Status {
    use_threads(threads);
    ExecArgs args{arg(DNNL_ARG_SRC, e->a_md, a.raw_data()), arg(DNNL_ARG_WEIGHTS, e->weights),
                  arg(DNNL_ARG_DST, e->y_md, y.raw_data()),
                  arg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, e->zp_md, &a_zp)};
    if (st->to_float)
      args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, e->scale_md, ctx.input(4).raw_data()));
    if (st->bias.defined())
      args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, e->bias_md, st->bias.raw_data()));
    if (e->y_scale_post_op >= 0)
      args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(e->y_scale_post_op) | DNNL_ARG_SRC_1, e->y_scale_md,
                   st->y_scale.raw_data()));
    execute(e->prim, args, e->scratch_md);
    return Status::Ok();
  });
}

// The same kernel: the state (or, unprepared, the node's op type) says which op it runs.
Status matmul_integer_to_float(KernelContext& ctx) { return matmul_integer(ctx); }

}  // namespace osprey::cpu
