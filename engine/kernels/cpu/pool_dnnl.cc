// com.osprey MaxPool (float32; bfloat16 in and out: fast mode's keep_bf16_between_convs
// makes a pool between bf16 convolutions bf16; uint8 / int8: a quantized model's pool between
// int8 convolutions): the channels-last max pool the channels_last
// pass puts between channels-last convolutions (ResNet's stem), so that the pool no longer
// needs a Transpose on each side. 2-D channels-last pools run on a row kernel (row_kernels.h: oneDNN 2.6's AVX2
// pooling over nhwc took 1.4-1.7 ms on ResNet50's stem pool, the row kernel a fraction of
// that); the others on oneDNN's pooling. X and Y are [N, spatial..., C] when
// channels_last = 1 (nwc / nhwc / ndhwc), [N, C, spatial...] otherwise. Attributes and
// errors are ONNX MaxPool's (kernel_shape, strides, pads, auto_pad, dilations, ceil_mode);
// there is no Indices output. The reference (reference/fused.cc, transposes around the
// reference MaxPool) is its oracle. ONNX MaxPool (float32, no Indices) and ONNX AveragePool
// (float32) run the same code in [N, C, spatial...] (below). Primitives are cached per input
// shape and algorithm in the node's state.
#include "kernels/cpu/dnnl_common.h"
#include "kernels/cpu/row_kernels.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;

struct PoolEntry {
  Shape out_shape;
  memory::desc src, dst, scratch;
  dnnl::pooling_v2_forward prim;
  bool rows = false;  // a 2-D channels-last pool: max_pool_nhwc_rows with `geometry`
  PoolGeometry geometry{};
};

struct PoolState final : KernelState {
  ShapeCache<PoolEntry> cache;
};

Result<std::shared_ptr<const PoolEntry>> build(const KernelContext& ctx, bool cl, int threads,
                                               memory::data_type type, dnnl::algorithm alg) {
  const Tensor& x = ctx.input(0);
  const Shape xs = channels_first(x.shape(), cl);  // as [N, C, spatial...]
  ref::Window w;
  w.in.assign(xs.begin() + 2, xs.end());
  w.kernel = ctx.attr_ints("kernel_shape");
  OSPREY_RETURN_IF_ERROR(ref::window_from_attrs(ctx, ctx.attr_int("ceil_mode", 0) != 0, &w));
  auto e = std::make_shared<PoolEntry>();
  Shape out = {xs[0], xs[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  e->out_shape = cl ? channels_last_of(out) : out;
  if (shape_numel(out) == 0) return std::shared_ptr<const PoolEntry>(e);
  if (cl && w.nd == 2 && alg == dnnl::algorithm::pooling_max) {
    e->rows = true;
    e->geometry = {w.in[0], w.in[1], xs[1], w.out[0], w.out[1], w.kernel[0], w.kernel[1],
                   w.strides[0], w.strides[1], w.dilations[0], w.dilations[1], w.pad_begin[0],
                   w.pad_begin[1]};
    return std::shared_ptr<const PoolEntry>(e);
  }
  memory::dims strides, kernel, dil, pad_l, pad_r;
  for (int64_t d = 0; d < w.nd; ++d) {
    const auto i = static_cast<size_t>(d);
    const int64_t ek = (w.kernel[i] - 1) * w.dilations[i] + 1;  // the window's extent
    strides.push_back(w.strides[i]);
    kernel.push_back(w.kernel[i]);
    dil.push_back(w.dilations[i] - 1);
    pad_l.push_back(w.pad_begin[i]);
    // ceil_mode's last window may reach past the end padding: oneDNN wants it as padding.
    pad_r.push_back(std::max(w.pad_end[i], (w.out[i] - 1) * w.strides[i] + ek - w.in[i] - w.pad_begin[i]));
  }
  e->src = boundary_desc(memory::dims(xs.begin(), xs.end()), cl, type);
  e->dst = boundary_desc(memory::dims(out.begin(), out.end()), cl, type);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  use_threads(threads);
  dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, alg, e->src, e->dst, strides,
                                      kernel, dil, pad_l, pad_r);
  dnnl::pooling_v2_forward::primitive_desc pd(desc, attr, dnnl_engine());
  e->prim = dnnl::pooling_v2_forward(pd);
  e->scratch = pd.scratchpad_desc();
  return std::shared_ptr<const PoolEntry>(e);
}

// Pools ctx's X (checked by the caller) with `alg`, channels-last when `cl`.
Status run_pool(KernelContext& ctx, bool cl, dnnl::algorithm alg) {
  const Tensor& x = ctx.input(0);
  const DType dt = x.dtype();
  const bool bf16 = dt == DType::kBFloat16, bytes = dt == DType::kUInt8 || dt == DType::kInt8;
  std::shared_ptr<PoolState> local;
  auto* st = dynamic_cast<PoolState*>(ctx.state());
  if (!st) {
    local = std::make_shared<PoolState>();
    st = local.get();
  }
  const int threads = kernel_threads(ctx);
  thread_local std::vector<int64_t> key;  // reused: no heap once warm
  key.assign({threads, static_cast<int64_t>(dt), static_cast<int64_t>(alg)});
  key.insert(key.end(), x.shape().begin(), x.shape().end());
  return guarded(alg == dnnl::algorithm::pooling_max ? "max pool" : "average pool", [&]() -> Status {
    const auto type = bf16 ? memory::data_type::bf16
                      : bytes ? (dt == DType::kInt8 ? memory::data_type::s8 : memory::data_type::u8)
                              : memory::data_type::f32;
    OSPREY_ASSIGN_OR_RETURN(auto e, st->cache.get(key, [&] { return build(ctx, cl, threads, type, alg); }));
    OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output_uninitialized(0, x.dtype(), e->out_shape));
    if (y.numel() == 0) return Status::Ok();
    if (x.numel() == 0) return invalid_argument("X has an empty dim but the output does not");
    if (e->rows) {
      const PoolGeometry& g = e->geometry;
      const VectorIsa isa = best_vector_isa();
      ctx.parallel_for(y.numel() / (g.OW * g.C), g.OW * g.C * g.KH * g.KW, [&](int64_t b, int64_t end) {
        if (bytes) {
          max_pool_nhwc_rows_bytes(isa, x.raw_data(), y.raw_data(), dt == DType::kInt8, g, b, end);
        } else if (bf16) {
          max_pool_nhwc_rows_bf16(isa, static_cast<const uint16_t*>(x.raw_data()),
                                  static_cast<uint16_t*>(y.raw_data()), g, b, end);
        } else {
          max_pool_nhwc_rows(isa, x.data<float>(), y.data<float>(), g, b, end);
        }
      });
      return Status::Ok();
    }
    use_threads(threads);
    execute(e->prim, {arg(DNNL_ARG_SRC, e->src, x.raw_data()), arg(DNNL_ARG_DST, e->dst, y.raw_data())},
            e->scratch);
    return Status::Ok();
  });
}

}  // namespace

Status channels_last_max_pool(KernelContext& ctx) {
  if (!ctx.has_input(0)) return invalid_argument("input X is required");
  const DType dt = ctx.input_value(0).is_tensor() ? ctx.input(0).dtype() : DType::kUndefined;
  if (dt != DType::kFloat32 && dt != DType::kBFloat16 && dt != DType::kUInt8 && dt != DType::kInt8)
    return invalid_argument("X must be a float32, bfloat16, uint8 or int8 tensor");
  if (ctx.output_requested(1)) return invalid_argument("com.osprey MaxPool has no Indices output");
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  if (!ctx.has_attr("kernel_shape")) return invalid_argument("attribute kernel_shape is required");
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3 || x.rank() > 5)
    return invalid_argument("X has shape ", shape_to_string(x.shape()),
                            "; this kernel takes 1-D to 3-D pooling (rank 3 to 5)");
  return run_pool(ctx, cl == 1, dnnl::algorithm::pooling_max);
}

}  // namespace osprey::cpu

namespace osprey::ref {
Status max_pool(KernelContext& ctx);      // reference/pool.cc
Status average_pool(KernelContext& ctx);  // reference/pool.cc
}  // namespace osprey::ref

namespace osprey::cpu {

// ONNX MaxPool, float32 and 1-D to 3-D, without its Indices output: the kernel above in
// [N, C, spatial...]. Every other form runs the reference (which was 18x onnxruntime's time on
// a [1, 256, 20, 20] 5x5 pool outside a convolution chain, where the channels_last pass
// leaves the ONNX op in place).
Status max_pool(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kFloat32 ||
      ctx.input(0).rank() < 3 || ctx.input(0).rank() > 5 || ctx.output_requested(1) || !ctx.has_attr("kernel_shape"))
    return ref::max_pool(ctx);
  return channels_last_max_pool(ctx);
}

// ONNX AveragePool, float32 and 1-D to 3-D, on oneDNN's average pooling in [N, C, spatial...]
// (count_include_pad: padding included, else excluded, as ONNX counts). A ceil_mode window
// past the end padding with count_include_pad runs the reference: ONNX divides it by the taps
// inside the padded input, oneDNN by all of its taps. oneDNN sums in float, the reference in
// double (its oracle in the tests, within 1e-6). The reference took 3.6 ms on a 3x3 pool over
// [1, 64, 80, 80], onnxruntime 0.17.
Status average_pool(KernelContext& ctx) {
  if (!ctx.has_input(0) || !ctx.input_value(0).is_tensor() || ctx.input(0).dtype() != DType::kFloat32 ||
      ctx.input(0).rank() < 3 || ctx.input(0).rank() > 5 || !ctx.has_attr("kernel_shape"))
    return ref::average_pool(ctx);
  const bool include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  if (include_pad && ctx.attr_int("ceil_mode", 0) != 0) return ref::average_pool(ctx);
  return run_pool(ctx, false,
                  include_pad ? dnnl::algorithm::pooling_avg_include_padding : dnnl::algorithm::pooling_avg_exclude_padding);
}

Result<std::shared_ptr<KernelState>> prepare_channels_last_max_pool(const KernelContext&) {
  return std::shared_ptr<KernelState>(std::make_shared<PoolState>());
}

}  // namespace osprey::cpu
