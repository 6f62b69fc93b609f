// com.osprey QLinearConv (a QDQ-quantized convolution, made by the qdq_conv_fusion pass; its
// definition and oracle are the reference's, conv.cc) on oneDNN's int8 convolutions: uint8 or
// int8 activations, int8 weights with zero points of 0 (the symmetric weights quantizers emit),
// int32 accumulation (AVX512-VNNI / AVX-VNNI where the CPU has it), then
//   y = (acc + B / (x_scale * w_scale[m])) * (x_scale * w_scale[m] / y_scale)
// with the activation (Relu, or Clip over [min / y_scale, max / y_scale]) as an eltwise
// post-op, y_zero_point added and the result rounded to nearest even and saturated by the
// primitive. This is the reference's arithmetic regrouped: results may differ from it by one
// quantization step where a value falls within float rounding of a rounding boundary. An int32
// B (ONNX QLinearConv's, kept by qoperator_rewrite) is in accumulator units already: it is the
// bias as it is, which is ONNX's arithmetic, (acc + B) * x_scale * w_scale[m] / y_scale.
// x_zero_point is the primitive's source zero point. channels_last = 1 (the channels_last pass
// converts these nodes like float ones): X and Y are nhwc and go to the primitive as they are;
// an NCHW node's are reordered into and out of the layout the primitive picks.
// Forms the primitive does not take (weights with zero points, per-channel x/y parameters,
// non-constant parameters, non-2-D shapes) run on the reference kernel; so does a node whose
// primitive oneDNN cannot create, and every node where oneDNN has no VNNI (its int8 kernels then
// sum pairs of products in saturating int16, wrong for full-range values; qdq_conv_fusion does
// not fuse there, so this is only for nodes made otherwise).
//
// ONNX ConvInteger (a dynamically quantized CNN: onnxruntime's quantize_dynamic writes one per
// convolution, its x_zero_point computed by DynamicQuantizeLinear) runs on the same primitive
// with an int32 destination, no scales, and the source zero point given at run time: the exact
// sums of (x - x_zero_point) * w, bit for bit the reference's. int8 weights with zero points of
// 0 (quantize_dynamic's symmetric weights); other forms run on the reference. com.osprey
// ConvIntegerToFloat (that convolution with its Cast -> Mul(scale) [-> Add(bias)] [-> Relu |
// Clip], fused by matmul_integer_fusion) writes float32 instead: the sums converted to float,
// times the run-time scale and plus the constant bias as binary post-ops (the reference's
// operations in its order, bit for bit), then the activation as an eltwise post-op.
#include <atomic>
#include <cmath>
#include <optional>

#include "kernels/cpu/conv_dnnl.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

std::atomic<int64_t> g_int8_built{0};

struct QConvEntry {
  Shape out_shape;
  dnnl::convolution_forward prim;
  // src/dst_plain: the tensors as they lie (nhwc, or nchw); src/dst_md: as the primitive takes
  // them (an NCHW node's are reordered into the layout the primitive picked, as conv_dnnl does).
  memory::desc src_plain, dst_plain, src_md, dst_md, bias_md, scratch_md;
  memory::desc zp_md;                        // ConvInteger's run-time source zero point
  memory::desc scale_post_md, bias_post_md;  // ConvIntegerToFloat's binary post-op operands
  std::optional<dnnl::reorder> src_reorder, dst_reorder;
  memory weights;  // packed for the primitive
};

struct QConvState final : KernelState {
  bool ready = false;  // false: this node runs on the reference
  bool integer_output = false;  // ConvInteger: int32 Y, x_zero_point given at run time
  bool float_output = false;    // ConvIntegerToFloat: float32 Y = act(float(acc) * scale + bias)
  Tensor float_bias;            // its constant bias [M] (undefined: none)
  bool channels_last = false;
  DType x_type = DType::kUndefined, y_type = DType::kUndefined;
  int64_t M = 0;
  std::vector<float> out_scales;  // x_scale * w_scale[m] / y_scale, one or M values
  std::vector<float> bias;        // B[m] / (x_scale * w_scale[m]); empty without B
  int32_t x_zp = 0, y_zp = 0;
  float lo = 0, hi = 0;  // the activation's bounds in y_scale units (Clip), or Relu
  std::string act;
  Tensor weights;  // int8 [M, C/group, kH, kW]
  ShapeCache<QConvEntry> cache;
};

memory::data_type dnnl_type(DType t) {
  return t == DType::kUInt8   ? memory::data_type::u8
         : t == DType::kInt32   ? memory::data_type::s32
         : t == DType::kFloat32 ? memory::data_type::f32
                                : memory::data_type::s8;
}

bool is_int8(DType t) { return t == DType::kUInt8 || t == DType::kInt8; }

// The state when every parameter is a constant of a form the primitive takes; not ready
// otherwise (the node then runs on the reference).
std::shared_ptr<QConvState> make_state(const KernelContext& ctx) {
  auto st = std::make_shared<QConvState>();
  if (!int8_vnni_available()) return st;  // saturating int16 pairs: the reference's results
  for (int i : {1, 3, 4, 6, 7})
    if (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()) return st;
  for (int i : {2, 5, 8})
    if (ctx.node().inputs.size() > static_cast<size_t>(i) && ctx.node().inputs[static_cast<size_t>(i)] != ir::kNoValue &&
        (!ctx.has_input(i) || !ctx.input_value(i).is_tensor()))
      return st;  // present but not a constant
  const Tensor& w = ctx.input(3);
  const Tensor &xs = ctx.input(1), &ws = ctx.input(4), &ys = ctx.input(6), &yz = ctx.input(7);
  if (w.dtype() != DType::kInt8 || w.rank() != 4 || !is_int8(yz.dtype()) || yz.numel() != 1 ||
      xs.dtype() != DType::kFloat32 || xs.numel() != 1 || ys.dtype() != DType::kFloat32 ||
      ys.numel() != 1 || ws.dtype() != DType::kFloat32 || (ws.numel() != 1 && ws.numel() != w.dim(0)))
    return st;
  const int64_t M = w.dim(0);
  if (ctx.has_input(5)) {
    const Tensor& wz = ctx.input(5);
    if (wz.dtype() != DType::kInt8) return st;
    for (int64_t i = 0; i < wz.numel(); ++i)
      if (wz.get_as_int64(i) != 0) return st;
  }
  if (ctx.has_input(2)) {
    const Tensor& xz = ctx.input(2);
    if (!is_int8(xz.dtype()) || xz.numel() != 1) return st;
    st->x_zp = static_cast<int32_t>(xz.get_as_int64(0));
    st->x_type = xz.dtype();
  }
  if (ctx.has_input(8)) {
    const Tensor& b = ctx.input(8);
    if ((b.dtype() != DType::kFloat32 && b.dtype() != DType::kInt32) || b.rank() != 1 || b.dim(0) != M) return st;
  }
  const std::string act = ctx.attr_string("activation", "");
  const std::vector<float> params = ctx.attr_floats("activation_params");
  const float y_scale = ys.data<float>()[0], x_scale = xs.data<float>()[0];
  if (act == "Clip" && params.size() == 2) {
    st->lo = params[0] / y_scale;
    st->hi = params[1] / y_scale;
  } else if (!((act.empty() || act == "Relu") && params.empty())) {
    return st;
  }
  if (!(y_scale > 0) || !(x_scale > 0)) return st;
  st->act = act;
  st->channels_last = ctx.attr_int("channels_last", 0) == 1;
  st->y_type = yz.dtype();
  st->y_zp = static_cast<int32_t>(yz.get_as_int64(0));
  st->M = M;
  for (int64_t m = 0; m < ws.numel(); ++m) {
    const float s = x_scale * ws.data<float>()[m];
    if (!(s > 0)) return st;
    st->out_scales.push_back(s / y_scale);
  }
  if (ctx.has_input(8) && ctx.input(8).dtype() == DType::kInt32)  // already in accumulator units
    for (int64_t m = 0; m < M; ++m) st->bias.push_back(static_cast<float>(ctx.input(8).data<int32_t>()[m]));
  else if (ctx.has_input(8))
    for (int64_t m = 0; m < M; ++m)
      st->bias.push_back(ctx.input(8).data<float>()[m] /
                         (x_scale * ws.data<float>()[ws.numel() > 1 ? m : 0]));
  st->weights = w;
  st->ready = true;
  return st;
}

// ConvInteger(x, w, x_zero_point?, w_zero_point?) and ConvIntegerToFloat (`to_float`: also
// scale, bias?): ready for a constant int8 4-D w whose zero points are 0 (and a constant float
// bias [M], a Relu or Clip activation).
std::shared_ptr<QConvState> make_integer_state(const KernelContext& ctx, bool to_float) {
  auto st = std::make_shared<QConvState>();
  st->integer_output = true;
  st->float_output = to_float;
  st->y_type = to_float ? DType::kFloat32 : DType::kInt32;
  if (!int8_vnni_available() || !ctx.has_input(1) || !ctx.input_value(1).is_tensor()) return st;
  if (to_float) {
    const std::string act = ctx.attr_string("activation", "");
    const std::vector<float> params = ctx.attr_floats("activation_params");
    if (act == "Clip" && params.size() == 2) {
      st->lo = params[0];
      st->hi = params[1];
    } else if (!((act.empty() || act == "Relu") && params.empty())) {
      return st;
    }
    st->act = act;
    st->channels_last = ctx.attr_int("channels_last", 0) == 1;
    if (ctx.has_input(5) && ctx.input_value(5).is_tensor()) {  // a constant bias (a computed one: the reference)
      const Tensor& b = ctx.input(5);
      if (b.dtype() != DType::kFloat32 || b.rank() != 1 || b.dim(0) != ctx.input(1).dim(0)) return st;
      st->float_bias = b;
    }
  }
  const Tensor& w = ctx.input(1);
  if (w.dtype() != DType::kInt8 || w.rank() != 4) return st;
  if (ctx.node().inputs.size() > 3 && ctx.node().inputs[3] != ir::kNoValue) {
    if (!ctx.has_input(3) || !ctx.input_value(3).is_tensor()) return st;  // computed
    const Tensor& wz = ctx.input(3);
    if (wz.dtype() != DType::kInt8) return st;
    for (int64_t i = 0; i < wz.numel(); ++i)
      if (wz.get_as_int64(i) != 0) return st;
  }
  st->M = w.dim(0);
  st->weights = w;
  st->ready = true;
  return st;
}

Result<std::shared_ptr<const QConvEntry>> build(const KernelContext& ctx, const QConvState& st,
                                                const Shape& xshape, DType x_type, int threads) {
  if (xshape.size() != 4)
    return invalid_argument("X has shape ", shape_to_string(xshape), "; the int8 convolution is 2-D (rank 4)");
  const Shape xs = channels_first(xshape, st.channels_last);
  const Shape& ws = st.weights.shape();
  const int64_t group = ctx.attr_int("group", 1);
  const int64_t N = xs[0], C = xs[1], M = st.M;
  if (group < 1 || ws[1] * group != C || M % group != 0)
    return invalid_argument("weights ", shape_to_string(ws), " do not match input ",
                            shape_to_string(xshape), st.channels_last ? " (channels last)" : "",
                            " with group ", group);
  ref::Window win;
  win.in.assign(xs.begin() + 2, xs.end());
  win.kernel.assign(ws.begin() + 2, ws.end());
  win.nd = 2;
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != win.kernel)
    return invalid_argument("attribute kernel_shape does not match the weights ", shape_to_string(ws));
  OSPREY_RETURN_IF_ERROR(ref::window_from_attrs(ctx, /*ceil_mode=*/false, &win));
  auto e = std::make_shared<QConvEntry>();
  const Shape out = {N, M, win.out[0], win.out[1]};
  e->out_shape = st.channels_last ? channels_last_of(out) : out;
  if (shape_numel(out) == 0 || shape_numel(xshape) == 0) return std::shared_ptr<const QConvEntry>(e);
  Dims src_dims(xs.begin(), xs.end()), dst_dims(out.begin(), out.end()), w_dims(ws.begin(), ws.end());
  if (group > 1) {
    w_dims[0] = M / group;
    w_dims.insert(w_dims.begin(), group);
  }
  Dims strides(win.strides.begin(), win.strides.end()), dil, pad_l, pad_r;
  for (size_t i = 0; i < 2; ++i) {
    dil.push_back(win.dilations[i] - 1);
    pad_l.push_back(win.pad_begin[i]);
    pad_r.push_back(win.pad_end[i]);
  }
  e->src_plain = boundary_desc(src_dims, st.channels_last, dnnl_type(x_type));
  e->dst_plain = boundary_desc(dst_dims, st.channels_last, dnnl_type(st.y_type));
  const auto any = memory::format_tag::any;
  const memory::desc src_want = st.channels_last ? e->src_plain : memory::desc(src_dims, dnnl_type(x_type), any);
  const memory::desc dst_want = st.channels_last ? e->dst_plain : memory::desc(dst_dims, dnnl_type(st.y_type), any);
  const bool has_bias = !st.bias.empty();
  if (has_bias) e->bias_md = plain_desc({M});
  dnnl::primitive_attr attr;
  dnnl::post_ops ops;
  if (st.integer_output) {
    attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
    e->zp_md = memory::desc({1}, memory::data_type::s32, memory::format_tag::x);
    if (st.float_output) {  // * scale (a run-time value), + bias[m]
      e->scale_post_md = memory::desc({1, 1, 1, 1}, memory::data_type::f32, memory::format_tag::nchw);
      ops.append_binary(dnnl::algorithm::binary_mul, e->scale_post_md);
      if (st.float_bias.defined()) {
        e->bias_post_md = memory::desc({1, M, 1, 1}, memory::data_type::f32, memory::format_tag::nchw);
        ops.append_binary(dnnl::algorithm::binary_add, e->bias_post_md);
      }
    }
  } else {
    attr.set_output_scales(st.out_scales.size() > 1 ? 2 : 0, st.out_scales);
    if (st.x_zp != 0) attr.set_zero_points(DNNL_ARG_SRC, 0, {st.x_zp});
    if (st.y_zp != 0) attr.set_zero_points(DNNL_ARG_DST, 0, {st.y_zp});
  }
  if (st.act == "Relu") ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
  if (st.act == "Clip") ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip, st.lo, st.hi);
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  use_threads(threads);
  const memory::desc w_any(w_dims, memory::data_type::s8, memory::format_tag::any);
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  auto desc = has_bias ? dnnl::convolution_forward::desc(prop, alg, src_want, w_any, e->bias_md, dst_want,
                                                         strides, dil, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(prop, alg, src_want, w_any, dst_want, strides,
                                                         dil, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine(), /*allow_empty=*/true);
  if (!pd) return unimplemented("oneDNN has no int8 convolution for this node");
  e->prim = dnnl::convolution_forward(pd);
  e->scratch_md = pd.scratchpad_desc();
  e->src_md = pd.src_desc();
  e->dst_md = pd.dst_desc();
  if (e->src_md != e->src_plain) e->src_reorder = make_reorder(e->src_plain, e->src_md);
  if (e->dst_md != e->dst_plain) e->dst_reorder = make_reorder(e->dst_md, e->dst_plain);
  const memory::desc w_plain(w_dims, memory::data_type::s8,
                             group > 1 ? memory::format_tag::goihw : memory::format_tag::oihw);
  e->weights = memory(pd.weights_desc(), dnnl_engine());
  run_reorder(make_reorder(w_plain, pd.weights_desc()), wrap(w_plain, st.weights.raw_data()), e->weights);
  g_int8_built.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<const QConvEntry>(e);
}

Result<std::shared_ptr<const QConvEntry>> entry_for(const KernelContext& ctx, QConvState& st,
                                                    const Shape& xshape, DType x_type, int threads) {
  thread_local std::vector<int64_t> key;
  key.assign({threads, static_cast<int64_t>(x_type), -1});
  key.insert(key.end(), xshape.begin(), xshape.end());
  return st.cache.get(key, [&] { return build(ctx, st, xshape, x_type, threads); });
}

// Runs the node's primitive on X (x_zp: ConvInteger's source zero point); `fallback` where
// oneDNN has none for the shape.
Status run_conv(KernelContext& ctx, QConvState* st, int32_t x_zp, Status (*fallback)(KernelContext&)) {
  const Tensor& x = ctx.input(0);
  const int threads = kernel_threads(ctx);
  return guarded("int8 convolution", [&]() -> Status {
    auto made = entry_for(ctx, *st, x.shape(), x.dtype(), threads);
    if (!made.ok() && made.status().code() == StatusCode::kUnimplemented) return fallback(ctx);
    OSPREY_ASSIGN_OR_RETURN(auto e, std::move(made));
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, st->y_type, e->out_shape));
    if (y.numel() == 0) return Status::Ok();
    use_threads(threads);
    Buffer src_buf, dst_buf;  // an NCHW node's tensors in the primitive's layout
    const void* src = x.raw_data();
    void* dst = y.raw_data();
    if (e->src_reorder) {
      src_buf = Buffer(e->src_md.get_size());
      run_reorder(*e->src_reorder, e->src_plain, x.raw_data(), e->src_md, src_buf.data());
      src = src_buf.data();
    }
    if (e->dst_reorder) {
      dst_buf = Buffer(e->dst_md.get_size());
      dst = dst_buf.data();
    }
    ExecArgs args{arg(DNNL_ARG_SRC, e->src_md, src), arg(DNNL_ARG_WEIGHTS, e->weights),
                  arg(DNNL_ARG_DST, e->dst_md, dst)};
    if (!st->bias.empty()) args.add(arg(DNNL_ARG_BIAS, e->bias_md, st->bias.data()));
    if (st->integer_output)
      args.add(arg(DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, e->zp_md, &x_zp));
    if (st->float_output) {
      args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, e->scale_post_md, ctx.input(4).raw_data()));
      if (st->float_bias.defined())
        args.add(arg(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, e->bias_post_md, st->float_bias.raw_data()));
    }
    execute(e->prim, args, e->scratch_md);
    if (e->dst_reorder) run_reorder(*e->dst_reorder, e->dst_md, dst, e->dst_plain, y.raw_data());
    return Status::Ok();
  });
}

// Builds the primitive for X's shape hint at load (X taken as uint8 when its type is open), so
// that the first run does not; a node oneDNN has no primitive for runs on the reference.
std::shared_ptr<KernelState> prebuilt(const KernelContext& ctx, std::shared_ptr<QConvState> st) {
  Shape hint;
  if (st->ready && ctx.shape_hint(0, &hint) && hint.size() == 4) {
    const DType xt = st->x_type == DType::kUndefined ? DType::kUInt8 : st->x_type;
    auto e = guarded("int8 convolution", [&]() -> Status {
      return entry_for(ctx, *st, hint, xt, kernel_threads(ctx)).status();
    });
    if (!e.ok() && e.code() == StatusCode::kUnimplemented) st->ready = false;
  }
  return st;
}

// ConvInteger / ConvIntegerToFloat on the primitive, or on `fallback` (the reference) for the
// forms it does not take.
Status run_integer_conv(KernelContext& ctx, bool to_float, Status (*fallback)(KernelContext&)) {
  auto* st = dynamic_cast<QConvState*>(ctx.state());
  if (!st || !st->ready || !st->integer_output || st->float_output != to_float || !ctx.has_input(0) ||
      !ctx.input_value(0).is_tensor() || !is_int8(ctx.input(0).dtype()) ||
      ctx.input(1).raw_data() != st->weights.raw_data())
    return fallback(ctx);
  if (to_float) {
    // The bias must be the constant the state holds (a bias it does not hold: the reference).
    if (!ctx.has_input(4) || ctx.input(4).dtype() != DType::kFloat32 || ctx.input(4).numel() != 1 ||
        ctx.has_input(5) != st->float_bias.defined() ||
        (st->float_bias.defined() && ctx.input(5).raw_data() != st->float_bias.raw_data()))
      return fallback(ctx);
  }
  if (ctx.has_input(3)) {  // the primitive has no weight zero points: only zeros
    const Tensor& wz = ctx.input(3);
    if (wz.dtype() != DType::kInt8) return fallback(ctx);
    for (int64_t i = 0; i < wz.numel(); ++i)
      if (wz.data<int8_t>()[i] != 0) return fallback(ctx);
  }
  int32_t x_zp = 0;
  if (ctx.has_input(2)) {
    const Tensor& z = ctx.input(2);
    if (z.dtype() != ctx.input(0).dtype() || z.numel() != 1) return fallback(ctx);  // (it names the error)
    x_zp = static_cast<int32_t>(z.get_as_int64(0));
  }
  return run_conv(ctx, st, x_zp, fallback);
}

}  // namespace

int64_t int8_convolutions_built() { return g_int8_built.load(std::memory_order_relaxed); }

Result<std::shared_ptr<KernelState>> prepare_qlinear_conv(const KernelContext& ctx) {
  return prebuilt(ctx, make_state(ctx));
}

Status qlinear_conv(KernelContext& ctx) {
  auto* st = dynamic_cast<QConvState*>(ctx.state());
  if (!st || !st->ready || st->integer_output || !ctx.has_input(0) || !ctx.input_value(0).is_tensor() ||
      !is_int8(ctx.input(0).dtype()) ||
      (st->x_type != DType::kUndefined && ctx.input(0).dtype() != st->x_type) ||
      ctx.input(3).raw_data() != st->weights.raw_data())
    return ref::fused_qlinear_conv(ctx);
  return run_conv(ctx, st, 0, ref::fused_qlinear_conv);
}

Result<std::shared_ptr<KernelState>> prepare_conv_integer(const KernelContext& ctx) {
  return prebuilt(ctx, make_integer_state(ctx, false));
}

Result<std::shared_ptr<KernelState>> prepare_conv_integer_to_float(const KernelContext& ctx) {
  return prebuilt(ctx, make_integer_state(ctx, true));
}

Status conv_integer(KernelContext& ctx) { return run_integer_conv(ctx, false, ref::conv_integer); }

Status conv_integer_to_float(KernelContext& ctx) {
  return run_integer_conv(ctx, true, ref::conv_integer_to_float);
}

}  // namespace osprey::cpu
