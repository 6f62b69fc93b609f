// Conv and com.osprey FusedConv on oneDNN (float32, 1-D/2-D/3-D, groups, depthwise, pads,
// strides, dilations, auto_pad). Tensors are NCHW at the op boundary, or NHWC for a FusedConv
// with channels_last = 1 (X, Z and Y are [N, spatial..., C]; W stays [M, C/group, k...]), or
// with channels_blocked = b (2-D; X, Z and Y are [N, C/b, H, W, b], oneDNN's nChw8c/nChw16c,
// handed over as they are like channels-last ones). For
// NCHW the source and destination are reordered into the layout the primitive prefers
// (nChw16c and friends) when it differs; channels-last tensors are handed to the primitive as
// they are (oneDNN's brgconv / depthwise kernels take nhwc directly), so a chain of
// channels-last convolutions runs without reorders (the channels_last pass makes such chains). Constant weights are reordered once per weights layout and kept in the node's
// state, together with a small cache of primitives per input shape. FusedConv adds the bias,
// the residual Z (sum post-op) and the activation (eltwise post-ops) inside the primitive.
// A channels-last 2-D convolution with constant weights may instead run on register tiles
// (conv_tiles.h) or as one 1x1 product per kernel row over copied pixels (conv_taps.h), and a
// blocked one in the tap form, decided once per node at its first build; a channels-last
// depthwise one in bf16 compute on float32 FMAs (conv_depthwise.h), likewise.
// With compute_precision = "bf16" (the session's fast mode) the weights are converted to bf16
// once and a float32 source per run; the primitive accumulates in f32 and writes f32. A
// FusedConv with bf16_input = 1 takes X as bfloat16 (no conversion), one with bf16_output = 1
// writes Y, and takes Z, as bfloat16 (the compute_precision pass sets both between fast-mode
// convolutions, so that activations stay bf16 from one to the next).
// With winograd = 1 or 2 (SessionOptions::winograd, set by apply_winograd on float32 3x3
// convolutions with stride 1, dilation 1 and one group) the primitive is oneDNN's Winograd
// one, in its own blocked layout (a channels-last source and destination are reordered around
// it), where oneDNN offers one and, for 1, where both channel counts are at least
// kWinogradMinChannels, the output has kWinogradMinPixels (conv_dnnl.h) and, with constant
// weights, it measured faster than the direct one on this CPU (conv_winograd_choice.h);
// otherwise the direct one. A channels-last float32 one with constant weights that our own
// F(2x2, 3x3) / F(4x4, 3x3) form fits (conv_winograd_nhwc.h: AVX-512, channels multiples of
// 16) runs in that form instead of oneDNN's Winograd primitive, decided once per node at the
// first build that asks.
#include "kernels/cpu/conv_dnnl.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>

#include "kernels/cpu/conv_depthwise.h"
#include "kernels/cpu/conv_product.h"
#include "kernels/cpu/conv_taps.h"
#include "kernels/cpu/conv_tiles.h"
#include "kernels/cpu/conv_winograd_nhwc.h"
#include "kernels/cpu/conv_winograd_choice.h"
#include "kernels/cpu/cpu_capabilities.h"
#include "kernels/cpu/dnnl_common.h"
#include "kernels/reference/nn_util.h"

namespace osprey::cpu {
namespace {

using dnnl::memory;
using Dims = memory::dims;

std::atomic<int64_t> g_winograd_built{0};

struct ConvEntry {
  Shape out_shape;
  int64_t M = 0;  // output channels
  dnnl::convolution_forward prim;
  memory::desc src_plain, src_md, w_plain, w_md, dst_plain, dst_md, bias_md, scratch_md;
  std::optional<dnnl::reorder> src_reorder, dst_reorder, z_reorder, w_reorder;
  memory packed_weights;  // weights in w_md when they are constant; empty otherwise
  std::shared_ptr<const TapConv> taps;  // set when the node runs in the tap form
  std::optional<TileConv> tile;         // set when the node runs in the tile form
  std::optional<DwConv> dw;             // set when the node runs in the depthwise form
  std::optional<ProductConv> product;   // set when the node runs in the product form
  std::optional<WinogradNhwcConv> wino_nhwc;  // set when the node runs in our Winograd form
  std::string form;  // what runs it, for profiles (ConvState::form)
};

struct ConvState final : KernelState {
  bool fused = false;
  bool channels_last = false;
  int64_t block = 0;  // channels_blocked: 0, 8 or 16
  bool bf16 = false;  // compute_precision = "bf16": bf16 source and weights, f32 accumulation
  bool x_bf16 = false;  // bf16_input = 1: X is bfloat16
  bool y_bf16 = false;  // bf16_output = 1: Y and Z are bfloat16
  int64_t winograd = 0;  // 0 direct, 1 Winograd where it pays, 2 Winograd where offered
  Activation act;
  // The constant weights (shared storage) until the session releases the plain copy;
  // undefined when computed. weights_data identifies them among the node's W inputs.
  Tensor weights;
  const void* weights_data = nullptr;
  bool weights_released = false;  // only `packed` holds the weights now
  ShapeCache<ConvEntry> cache;
  // Constant weights reordered into each layout a primitive asked for (under cache's lock).
  // The first is made at load when the input's shape is declared (prepack); a later layout is
  // reordered from the plain weights, or from the first packed form once they are released.
  std::vector<std::pair<memory::desc, memory>> packed;
  std::vector<std::shared_ptr<void>> packed_storage;  // what `packed`'s memories live in
  // When a primitive takes W in its plain layout, its "packed" form is the plain W itself:
  // this keeps that storage alive after the session releases its copy.
  Tensor plain_held;
  // Whether the node runs in the tap form (conv_taps.h): -1 until its first build with constant
  // weights decides, for every shape after it (so released weights are always held in the form
  // later shapes need). tap_rows holds the row weights packed for it.
  int taps = -1;
  std::vector<std::shared_ptr<const TapRows>> tap_rows;
  // Likewise for the tile form (conv_tiles.h), decided first; tile_panels holds its weights,
  // packed once whatever the input's shape.
  int tiles = -1;
  std::shared_ptr<const std::vector<float>> tile_panels;
  // Likewise for the bf16 depthwise form (conv_depthwise.h); dw_weights holds its weights.
  int dw = -1;
  std::shared_ptr<const std::vector<float>> dw_weights;
  // Likewise for the product form (conv_product.h), decided before the tile and tap forms;
  // product_b holds its weights.
  int product = -1;
  std::shared_ptr<const PanelB> product_b;
  // Likewise for our Winograd form (conv_winograd_nhwc.h), decided first; wino_nhwc_w holds its
  // weights.
  int wino_nhwc = -1;
  std::shared_ptr<const WinogradNhwcWeights> wino_nhwc_w;
  // The entry the last run took, for form(). A run compares last_raw without a lock and takes
  // the mutex only when its entry differs (a new shape); `last` keeps that entry alive, so its
  // address cannot be reused while last_raw names it.
  mutable std::mutex last_mu;
  std::shared_ptr<const ConvEntry> last;
  std::atomic<const ConvEntry*> last_raw{nullptr};

  std::string form() const override {
    std::lock_guard<std::mutex> lock(last_mu);
    return last ? last->form : std::string();
  }

  bool holds_constant(int input) const override {
    return input == 1 &&
           (!packed.empty() || !tap_rows.empty() || tile_panels || dw_weights || product_b ||
            wino_nhwc_w);
  }
  void constant_released(int input) override {
    if (input != 1) return;
    weights = Tensor();
    weights_released = true;
  }
};

Result<std::shared_ptr<ConvState>> make_state(const KernelContext& ctx, bool fused) {
  auto st = std::make_shared<ConvState>();
  st->fused = fused;
  if (fused) {
    OSPREY_RETURN_IF_ERROR(read_activation(ctx, &st->act));
    const int64_t cl = ctx.attr_int("channels_last", 0);
    if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
    st->channels_last = cl == 1;
    st->block = ctx.attr_int("channels_blocked", 0);
    if (st->block != 0 && st->block != 8 && st->block != 16)
      return invalid_argument("attribute channels_blocked must be 0, 8 or 16, got ", st->block);
    if (st->block && st->channels_last)
      return invalid_argument("channels_last and channels_blocked cannot both be set");
  }
  OSPREY_ASSIGN_OR_RETURN(st->bf16, read_bf16_compute(ctx));
  if (fused) {
    for (auto [name, flag] : {std::pair{"bf16_input", &st->x_bf16}, std::pair{"bf16_output", &st->y_bf16}}) {
      const int64_t v = ctx.attr_int(name, 0);
      if (v != 0 && v != 1) return invalid_argument("attribute ", name, " must be 0 or 1, got ", v);
      if (v == 1 && !st->bf16)
        return invalid_argument("attribute ", name, " = 1 needs compute_precision = \"bf16\"");
      *flag = v == 1;
    }
  }
  st->winograd = ctx.attr_int("winograd", 0);
  if (st->winograd < 0 || st->winograd > 2)
    return invalid_argument("attribute winograd must be 0, 1 or 2, got ", st->winograd);
  if (st->winograd && st->bf16)
    return invalid_argument("attribute winograd needs float32 compute (not compute_precision = \"bf16\")");
  if (ctx.has_input(1)) {
    OSPREY_RETURN_IF_ERROR(require_f32(ctx, 1, "W"));
    st->weights = ctx.input(1);
    st->weights_data = st->weights.raw_data();
  }
  return st;
}

// Input i is float32, or bfloat16 when the node's attribute `attr` says so.
Status require_type(const KernelContext& ctx, int i, const char* what, bool bf16, const char* attr) {
  if (!bf16) return require_f32(ctx, i, what);
  if (ctx.has_input(i) && (!ctx.input_value(i).is_tensor() || ctx.input(i).dtype() != DType::kBFloat16))
    return invalid_argument(what, " must be a bfloat16 tensor (", attr, " = 1)");
  return Status::Ok();
}

Status check_inputs(const KernelContext& ctx, const ConvState& st, bool fused) {
  if (!ctx.has_input(0) || !ctx.has_input(1)) return invalid_argument("X and W are required");
  OSPREY_RETURN_IF_ERROR(require_type(ctx, 0, "X", st.x_bf16, "bf16_input"));
  OSPREY_RETURN_IF_ERROR(require_f32(ctx, 1, "W"));
  OSPREY_RETURN_IF_ERROR(require_f32(ctx, 2, "B"));
  if (fused) OSPREY_RETURN_IF_ERROR(require_type(ctx, 3, "residual Z", st.y_bf16, "bf16_output"));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  if (st.block) return Status::Ok();  // build() checks the blocked shapes, for prepare too
  if (x.rank() < 3 || x.rank() > 5)
    return invalid_argument("X has shape ", shape_to_string(x.shape()),
                            "; this kernel takes 1-D to 3-D convolutions (rank 3 to 5)");
  if (w.rank() != x.rank())
    return invalid_argument("weights have rank ", w.rank(), " but the input has rank ", x.rank());
  return Status::Ok();
}

// What a primitive is built for: the input and weights shapes and which optional inputs exist.
struct ConvProblem {
  const Shape* x = nullptr;  // not owned: the run's input, or the prepare step's hint
  const Shape* w = nullptr;
  bool has_bias = false, has_z = false;
};

// A product or Winograd form's activation (tile_activation's) as the clamp of its output.
template <class Form>
void set_clamp(Form& f, TileAct act, float lo, float hi) {
  f.clamp = act != TileAct::kNone;
  f.lo = act == TileAct::kRelu ? 0.0f : lo;
  f.hi = act == TileAct::kRelu ? INFINITY : hi;
}

}  // namespace

int64_t winograd_min_pixels() {
  static const int64_t pixels = avx512_in_halves() ? kWinogradMinPixelsHalfRate : kWinogradMinPixels;
  return pixels;
}

namespace {

bool winograd_wanted(const ConvState& st, const ref::Window& win, int64_t group, int64_t C, int64_t M) {
  // make_state refuses winograd with bf16 compute, so st.winograd != 0 means float32 here.
  if (st.winograd == 0 || group != 1 || win.nd != 2) return false;
  for (int64_t i = 0; i < 2; ++i) {
    const auto k = static_cast<size_t>(i);
    if (win.kernel[k] != 3 || win.strides[k] != 1 || win.dilations[k] != 1) return false;
  }
  return st.winograd == 2 || (C >= kWinogradMinChannels && M >= kWinogradMinChannels &&
                              win.out[0] * win.out[1] >= winograd_min_pixels());
}

// oneDNN's Winograd primitive for the shape, in the layouts it prefers; none where it offers
// none (no AVX-512, or a shape its kernels do not take).
std::optional<dnnl::convolution_forward::primitive_desc> winograd_pd(
    bool has_bias, const memory::desc& bias_md, const Dims& src_dims, const Dims& w_dims,
    const Dims& dst_dims, const ref::Window& win, const dnnl::primitive_attr& attr) {
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  const memory::desc src(src_dims, f32, any), w(w_dims, f32, any), dst(dst_dims, f32, any);
  const Dims strides = {1, 1}, dil = {0, 0};
  const Dims pad_l(win.pad_begin.begin(), win.pad_begin.end()), pad_r(win.pad_end.begin(), win.pad_end.end());
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_winograd;
  auto desc = has_bias ? dnnl::convolution_forward::desc(prop, alg, src, w, bias_md, dst, strides, dil, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(prop, alg, src, w, dst, strides, dil, pad_l, pad_r);
  dnnl::convolution_forward::primitive_desc pd(desc, attr, dnnl_engine(), /*allow_empty=*/true);
  if (!pd) return std::nullopt;
  return pd;
}

Result<std::shared_ptr<const ConvEntry>> build(const KernelContext& ctx, ConvState& st,
                                               const ConvProblem& pb, int threads, bool packable) {
  const bool cl = st.channels_last;
  const int64_t blk = st.block;
  const Shape &xshape = *pb.x, &wshape = *pb.w;
  if (blk && (xshape.size() != 5 || xshape[4] != blk || wshape.size() != 4))
    return invalid_argument("X has shape ", shape_to_string(xshape), "; channels_blocked = ", blk,
                            " takes [N, C/", blk, ", H, W, ", blk, "] and 4-D weights");
  // The input's [N, C, spatial...]
  const Shape xs = blk ? Shape{xshape[0], xshape[1] * blk, xshape[2], xshape[3]}
                       : channels_first(xshape, cl);
  const int64_t group = ctx.attr_int("group", 1);
  if (group < 1) return invalid_argument("attribute group must be >= 1, got ", group);
  const int64_t N = xs[0], C = xs[1], M = wshape[0];
  if (wshape[1] * group != C || M % group != 0)
    return invalid_argument("weights ", shape_to_string(wshape), " do not match input ",
                            shape_to_string(xshape), cl ? " (channels last)" : blk ? " (channels blocked)" : "",
                            " with group ", group);
  if (blk && M % blk != 0)
    return invalid_argument("weights ", shape_to_string(wshape), " have ", M,
                            " output channels; channels_blocked = ", blk, " needs a multiple of ", blk);
  ref::Window win;
  win.in.assign(xs.begin() + 2, xs.end());
  win.kernel.assign(wshape.begin() + 2, wshape.end());
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != win.kernel)
    return invalid_argument("attribute kernel_shape does not match the weights ",
                            shape_to_string(wshape));
  OSPREY_RETURN_IF_ERROR(ref::window_from_attrs(ctx, /*ceil_mode=*/false, &win));
  auto e = std::make_shared<ConvEntry>();
  e->M = M;
  Shape out = {N, M};  // [N, M, spatial...]
  out.insert(out.end(), win.out.begin(), win.out.end());
  e->out_shape = cl ? channels_last_of(out) : out;
  if (blk) e->out_shape = {N, M / blk, out[2], out[3], blk};
  if (shape_numel(out) == 0 || shape_numel(xshape) == 0) return std::shared_ptr<const ConvEntry>(e);

  Dims src_dims(xs.begin(), xs.end());
  Dims dst_dims(out.begin(), out.end());
  Dims w_dims(wshape.begin(), wshape.end());
  if (group > 1) {  // [G, M/G, C/G, k...]
    w_dims[0] = M / group;
    w_dims.insert(w_dims.begin(), group);
  }
  Dims strides(win.strides.begin(), win.strides.end()), dil, pad_l, pad_r;
  for (int64_t i = 0; i < win.nd; ++i) {
    dil.push_back(win.dilations[static_cast<size_t>(i)] - 1);
    pad_l.push_back(win.pad_begin[static_cast<size_t>(i)]);
    pad_r.push_back(win.pad_end[static_cast<size_t>(i)]);
  }
  const auto f32 = memory::data_type::f32;
  const auto any = memory::format_tag::any;
  const auto blk_tag = blk == 16 ? memory::format_tag::nChw16c : memory::format_tag::nChw8c;
  const auto x_type = st.x_bf16 ? memory::data_type::bf16 : f32;
  const auto y_type = st.y_bf16 ? memory::data_type::bf16 : f32;
  e->src_plain = blk ? memory::desc(src_dims, x_type, blk_tag) : boundary_desc(src_dims, cl, x_type);
  e->dst_plain = blk ? memory::desc(dst_dims, y_type, blk_tag) : boundary_desc(dst_dims, cl, y_type);
  e->w_plain = plain_desc(w_dims);
  const bool has_bias = pb.has_bias, has_z = pb.has_z;
  if (has_bias) e->bias_md = plain_desc({M});

  dnnl::post_ops ops;
  if (has_z) ops.append_sum(1.0f);
  append_activation(st.act, &ops);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  use_threads(threads);
  // Channels-last tensors go in and out as they are; NCHW ones in the primitive's choice.
  // In bf16 compute the source and weights are bf16 (a float32 source converted per run, in
  // the same layout when channels-last); the destination is f32 unless bf16_output.
  const auto in_type = st.bf16 ? memory::data_type::bf16 : f32;
  const memory::desc src_any = blk ? memory::desc(src_dims, in_type, blk_tag)
                               : cl  ? memory::desc(src_dims, in_type, channels_last_tag(src_dims.size()))
                                     : memory::desc(src_dims, in_type, any),
                     dst_any = cl || blk ? e->dst_plain : memory::desc(dst_dims, y_type, any),
                     w_any(w_dims, in_type, any);
  const auto prop = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::convolution_direct;
  auto desc = has_bias ? dnnl::convolution_forward::desc(prop, alg, src_any, w_any, e->bias_md,
                                                         dst_any, strides, dil, pad_l, pad_r)
                       : dnnl::convolution_forward::desc(prop, alg, src_any, w_any, dst_any,
                                                         strides, dil, pad_l, pad_r);
  // A channels-last depthwise convolution in bf16 compute with constant weights may run in the
  // depthwise form, decided once per node at its first build (its weights do not depend on
  // the input's shape).
  if (packable && cl && st.bf16 && group == C && M == C && win.nd == 2 && !has_z && st.dw != 0) {
    TileAct act = TileAct::kNone;
    float lo = 0, hi = 0;
    const bool fits = win.dilations[0] == 1 && win.dilations[1] == 1 &&
                      depthwise_fits(win.kernel[0], win.kernel[1], win.strides[0], win.strides[1],
                                     win.pad_begin[0], win.pad_begin[1]) &&
                      st.act.affine.empty() && tile_activation(st.act.name, st.act.params, &act, &lo, &hi);
    if (st.dw < 0) st.dw = fits && depthwise_wanted() ? 1 : 0;
    if (st.dw == 1) {
      if (!fits) return internal_error("convolution: a shape outside the depthwise form");
      if (!st.dw_weights) {
        if (st.weights_released) return internal_error("convolution: W was released unpacked");
        st.dw_weights = std::make_shared<const std::vector<float>>(
            pack_depthwise_weights(st.weights.data<float>(), C, win.kernel[0], win.kernel[1]));
      }
      DwConv d;
      d.N = N;
      d.C = C;
      d.H = xs[2];
      d.W = xs[3];
      d.OH = win.out[0];
      d.OW = win.out[1];
      d.KH = win.kernel[0];
      d.KW = win.kernel[1];
      d.SH = win.strides[0];
      d.SW = win.strides[1];
      d.PH = win.pad_begin[0];
      d.PW = win.pad_begin[1];
      d.x_bf16 = st.x_bf16;
      d.y_bf16 = st.y_bf16;
      d.act = act;
      d.lo = lo;
      d.hi = hi;
      d.weights = st.dw_weights;
      e->dw = d;
      e->form = "depthwise (bf16 inputs, float32 FMAs)";
      return std::shared_ptr<const ConvEntry>(e);
    }
  }
  // The 2-D problem as the Winograd, product, tile and tap forms see it (win has two dimensions).
  const auto nhwc_problem = [&] {
    return NhwcConv{N, C, xs[2], xs[3], M, win.kernel[0], win.kernel[1], win.out[0],
                    win.out[1], win.strides[0], win.strides[1], win.dilations[0],
                    win.dilations[1], win.pad_begin[0], win.pad_begin[1], has_bias, has_z, blk};
  };
  // A float32 channels-last convolution with constant weights that the winograd attribute
  // leaves to a Winograd algorithm runs in our F(4x4) / F(2x2) form where it fits, decided once
  // per node at the first build that asks (its weights serve every input shape). The form
  // transforms the plain weights: where the session released them after an earlier shape ran
  // in another form (an image too small for Winograd), the node stays out of it.
  if (packable && cl && !blk && !st.bf16 && group == 1 && win.nd == 2 && st.wino_nhwc != 0 &&
      (st.wino_nhwc == 1 || winograd_wanted(st, win, group, C, M))) {
    const NhwcConv tp = nhwc_problem();
    TileAct act = TileAct::kNone;
    float lo = 0, hi = 0;
    const bool act_ok = st.act.affine.empty() && tile_activation(st.act.name, st.act.params, &act, &lo, &hi);
    const Tensor* plain = !st.weights_released ? &st.weights
                          : st.plain_held.defined() ? &st.plain_held
                                                    : nullptr;
    if (st.wino_nhwc < 0) st.wino_nhwc = act_ok && plain && winograd_nhwc_fits(tp) ? 1 : 0;
    if (st.wino_nhwc == 1) {
      if (!st.wino_nhwc_w) {
        if (!plain) return internal_error("convolution: W was released unpacked");
        st.wino_nhwc_w = pack_winograd_nhwc_weights(plain->data<float>(), M, C, winograd_nhwc_tile(tp));
      }
      WinogradNhwcConv wc;
      wc.p = tp;
      wc.w = st.wino_nhwc_w;
      set_clamp(wc, act, lo, hi);
      e->wino_nhwc = wc;
      e->form = st.wino_nhwc_w->m == 4 ? "winograd F(4x4, 3x3)" : "winograd F(2x2, 3x3)";
      return std::shared_ptr<const ConvEntry>(e);
    }
  }
  std::optional<dnnl::convolution_forward::primitive_desc> wino;
  // Winograd weights are reordered from the plain ones only (oneDNN reorders into its Winograd
  // layout from plain layouts): once the plain weights are gone, a new shape runs directly.
  const bool plain_w = !packable || !st.weights_released || st.plain_held.defined();
  if (plain_w && winograd_wanted(st, win, group, C, M)) wino = winograd_pd(has_bias, e->bias_md, src_dims, w_dims, dst_dims, win, attr);
  std::optional<dnnl::convolution_forward::primitive_desc> direct;
  // "auto" with constant weights: Winograd only where it measured faster on this CPU.
  if (wino && st.winograd == 1 && packable) {
    direct.emplace(desc, attr, dnnl_engine());
    ConvTrialIo io{e->src_plain, e->dst_plain, e->w_plain, e->bias_md,
                   st.weights_released ? st.plain_held.raw_data() : st.weights.raw_data(), has_bias};
    std::vector<int64_t> key = {threads, cl, blk, has_bias, has_z, !st.act.name.empty(), -1};
    key.insert(key.end(), src_dims.begin(), src_dims.end());
    key.insert(key.end(), dst_dims.begin(), dst_dims.end());
    key.insert(key.end(), pad_l.begin(), pad_l.end());
    key.insert(key.end(), pad_r.begin(), pad_r.end());
    if (!winograd_measured_faster(*wino, *direct, io, key)) wino.reset();
  }
  // A float32 channels-last convolution with constant weights may run in the product form,
  // decided once per node at its first build (its packed weights serve every input shape).
  if (!wino && packable && cl && group == 1 && !st.bf16 && win.nd == 2 && st.product != 0) {
    const NhwcConv tp = nhwc_problem();
    TileAct act = TileAct::kNone;
    float lo = 0, hi = 0;
    const bool act_ok = st.act.affine.empty() && tile_activation(st.act.name, st.act.params, &act, &lo, &hi);
    if (st.product < 0) st.product = act_ok && product_conv_pays(tp) ? 1 : 0;
    if (st.product == 1) {
      if (!st.product_b) {
        if (st.weights_released) return internal_error("convolution: W was released unpacked");
        st.product_b = pack_product_weights(st.weights.data<float>(), M, C, tp.KH, tp.KW);
      }
      ProductConv pc;
      pc.p = tp;
      pc.b = st.product_b;
      set_clamp(pc, act, lo, hi);
      e->product = pc;
      e->form = "product (panel_product)";
      return std::shared_ptr<const ConvEntry>(e);
    }
  }
  dnnl::convolution_forward::primitive_desc pd =
      wino ? *wino : direct ? *direct : dnnl::convolution_forward::primitive_desc(desc, attr, dnnl_engine());
  // The tile and tap forms need only the direct primitive's name: decide before compiling it.
  const bool forms_apply = !wino && packable && (cl || blk) && group == 1 && !st.bf16 && win.nd == 2 &&
                       shape_numel(win.kernel) > 1;
  if (forms_apply) {
    const NhwcConv tp = nhwc_problem();
    if (st.tiles != 0 && !blk) {
      TileAct act = TileAct::kNone;
      float lo = 0, hi = 0;
      const bool act_ok = st.act.affine.empty() && tile_activation(st.act.name, st.act.params, &act, &lo, &hi);
      if (st.tiles < 0) st.tiles = act_ok && tiles_pay(tp, pd.impl_info_str()) ? 1 : 0;
      if (st.tiles == 1) {
        if (!st.tile_panels) {
          if (st.weights_released) return internal_error("convolution: W was released unpacked");
          auto panels = std::make_shared<std::vector<float>>(
              static_cast<size_t>(conv_panel_floats(M, C, tp.KH, tp.KW)));
          pack_conv_panels(st.weights.data<float>(), M, C, tp.KH, tp.KW, panels->data());
          st.tile_panels = std::move(panels);
        }
        e->tile = make_tile_conv(tp, act, lo, hi, st.tile_panels);
        e->form = "register tiles";
        return std::shared_ptr<const ConvEntry>(e);
      }
    }
    if (st.taps != 0) {
      if (st.taps < 0) st.taps = taps_pay(tp, pd.impl_info_str()) ? 1 : 0;
      // A blocked image too large for one block runs directly (its weights from the rows).
      if (st.taps == 1 && taps_fit(tp)) {
        const float* w = st.weights_released ? nullptr : st.weights.data<float>();
        OSPREY_ASSIGN_OR_RETURN(e->taps, build_taps(tp, st.act, w, &st.tap_rows));
        e->form = "taps (a 1x1 product per kernel row)";
        return std::shared_ptr<const ConvEntry>(e);
      }
    }
  }
  e->prim = dnnl::convolution_forward(pd);
  e->form = pd.impl_info_str();
  if (wino) g_winograd_built.fetch_add(1, std::memory_order_relaxed);
  e->src_md = pd.src_desc();
  e->dst_md = pd.dst_desc();
  e->w_md = pd.weights_desc();
  e->scratch_md = pd.scratchpad_desc();
  if (e->src_md != e->src_plain) e->src_reorder = make_reorder(e->src_plain, e->src_md);
  if (e->dst_md != e->dst_plain) {
    e->dst_reorder = make_reorder(e->dst_md, e->dst_plain);
    if (has_z) e->z_reorder = make_reorder(e->dst_plain, e->dst_md);
  }
  if (e->w_md != e->w_plain) e->w_reorder = make_reorder(e->w_plain, e->w_md);
  if (packable) {
    for (const auto& [md, mem] : st.packed)
      if (md == e->w_md) e->packed_weights = mem;
    if (!e->packed_weights) {
      if (st.weights_released && st.packed.empty()) {  // only the tap rows hold W
        if (st.tap_rows.empty()) return internal_error("convolution: W was released unpacked");
        std::vector<float> plain =
            unpack_tap_rows(*st.tap_rows.front(), M, C, wshape[2], wshape[3]);
        e->packed_weights = large_memory(e->w_md, &st.packed_storage);
        run_reorder(make_reorder(e->w_plain, e->w_md), wrap(e->w_plain, plain.data()),
                    e->packed_weights);
      } else if (st.weights_released && st.plain_held.defined()) {  // held for Winograd
        e->packed_weights = large_memory(e->w_md, &st.packed_storage);
        run_reorder(make_reorder(e->w_plain, e->w_md), wrap(e->w_plain, st.plain_held.raw_data()),
                    e->packed_weights);
      } else if (st.weights_released) {  // only a packed form is left: reorder from it
        const auto& [from_md, from] = st.packed.front();
        e->packed_weights = large_memory(e->w_md, &st.packed_storage);
        run_reorder(make_reorder(from_md, e->w_md), from, e->packed_weights);
      } else if (e->w_reorder) {
        e->packed_weights = large_memory(e->w_md, &st.packed_storage);
        run_reorder(*e->w_reorder, wrap(e->w_plain, st.weights.raw_data()), e->packed_weights);
        // Other layouts are not reordered from a Winograd one: keep the plain weights too.
        if (wino) st.plain_held = st.weights;
      } else {  // the primitive reads W as it is: hold the plain storage
        e->packed_weights = wrap(e->w_plain, st.weights.raw_data());
        st.plain_held = st.weights;
      }
      st.packed.emplace_back(e->w_md, e->packed_weights);
    }
    // Runs read the packed weights: the reorder is not needed again, and one into a Winograd
    // layout holds a scratchpad as large as the weights.
    e->w_reorder.reset();
  }
  return std::shared_ptr<const ConvEntry>(e);
}

Result<std::shared_ptr<const ConvEntry>> entry_for(const KernelContext& ctx, ConvState& st,
                                                   const ConvProblem& pb, int threads,
                                                   bool packable) {
  thread_local std::vector<int64_t> key;  // reused: no heap once warm
  key.assign({threads, packable, pb.has_bias, pb.has_z, st.bf16, -1});
  key.insert(key.end(), pb.x->begin(), pb.x->end());
  key.push_back(-1);
  key.insert(key.end(), pb.w->begin(), pb.w->end());
  return st.cache.get(key, [&] { return build(ctx, st, pb, threads, packable); });
}

Status run_conv(KernelContext& ctx, bool fused) {
  std::shared_ptr<ConvState> local;
  auto* st = dynamic_cast<ConvState*>(ctx.state());
  if (!st) {  // no prepared state (e.g. run outside a session): prepare for this run only
    OSPREY_ASSIGN_OR_RETURN(local, make_state(ctx, fused));
    local->weights = Tensor();
    local->weights_data = nullptr;
    st = local.get();
  }
  OSPREY_RETURN_IF_ERROR(check_inputs(ctx, *st, fused));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const bool packable = st->weights_released
                            ? is_released_constant(w)
                            : st->weights.defined() && st->weights_data == w.raw_data() &&
                                  st->weights.shape() == w.shape();
  if (is_released_constant(w) && !packable)
    return internal_error("convolution: W was released but is not held packed");
  const int threads = kernel_threads(ctx);
  const ConvProblem pb{&x.shape(), &w.shape(), ctx.has_input(2), fused && ctx.has_input(3)};
  const bool has_bias = pb.has_bias, has_z = pb.has_z;
  return guarded("convolution", [&]() -> Status {
    OSPREY_ASSIGN_OR_RETURN(auto e, entry_for(ctx, *st, pb, threads, packable));
    if (st->last_raw.load(std::memory_order_acquire) != e.get()) {
      std::lock_guard<std::mutex> lock(st->last_mu);
      st->last = e;
      st->last_raw.store(e.get(), std::memory_order_release);
    }
    if (has_bias && (ctx.input(2).rank() != 1 || ctx.input(2).dim(0) != e->M))
      return invalid_argument("bias has shape ", shape_to_string(ctx.input(2).shape()),
                              ", expected [", e->M, "]");
    if (has_z && ctx.input(3).shape() != e->out_shape)
      return invalid_argument("residual Z has shape ", shape_to_string(ctx.input(3).shape()),
                              ", expected the output shape ", shape_to_string(e->out_shape));
    // The residual Z is the sum post-op's starting value: Y takes over its bytes when Z is
    // not read after this node, and is a copy of it otherwise.
    const DType y_type = st->y_bf16 ? DType::kBFloat16 : DType::kFloat32;
    OSPREY_ASSIGN_OR_RETURN(Tensor y, has_z ? ctx.new_output_over_input(0, 3, y_type, e->out_shape)
                                            : ctx.new_output_uninitialized(0, y_type, e->out_shape));
    const bool z_in_y = has_z && ctx.input(3).raw_data() == y.raw_data();
    if (y.numel() == 0) return Status::Ok();
    if (x.numel() == 0) {  // empty reduction: the conv contributes nothing
      return unimplemented("convolution over an empty input with a non-empty output");
    }
    use_threads(threads);
    if (e->dw) {
      run_depthwise(*e->dw, x.raw_data(), has_bias ? ctx.input(2).data<float>() : nullptr, y.raw_data(),
                    ctx.pool());
      return Status::Ok();
    }
    if (e->wino_nhwc) {
      if (has_z && !z_in_y) std::memcpy(y.raw_data(), ctx.input(3).raw_data(), y.nbytes());
      run_winograd_nhwc(*e->wino_nhwc, x.data<float>(), has_bias ? ctx.input(2).data<float>() : nullptr,
                     y.data<float>(), threads);
      return Status::Ok();
    }
    if (e->product) {
      if (has_z && !z_in_y) std::memcpy(y.raw_data(), ctx.input(3).raw_data(), y.nbytes());
      run_product_conv(*e->product, x.data<float>(), has_bias ? ctx.input(2).data<float>() : nullptr,
                       y.data<float>(), threads);
      return Status::Ok();
    }
    if (e->tile) {
      if (has_z && !z_in_y) std::memcpy(y.raw_data(), ctx.input(3).raw_data(), y.nbytes());
      return run_tile_conv(best_vector_isa(), *e->tile, x.data<float>(),
                           has_bias ? ctx.input(2).data<float>() : nullptr, y.data<float>(),
                           ctx.pool(), ctx.max_elements());
    }
    if (e->taps) {
      if (has_z && !z_in_y) std::memcpy(y.raw_data(), ctx.input(3).raw_data(), y.nbytes());
      run_taps(*e->taps, x.data<float>(), has_bias ? ctx.input(2).data<float>() : nullptr,
               y.data<float>(), ctx.pool());
      return Status::Ok();
    }
    Buffer src_buf, w_buf, dst_buf;  // only where a layout differs from the tensors' own
    ExecArgs args;
    if (e->src_reorder) {
      src_buf = Buffer(e->src_md.get_size());
      run_reorder(*e->src_reorder, e->src_plain, x.raw_data(), e->src_md, src_buf.data());
      args.add(arg(DNNL_ARG_SRC, e->src_md, src_buf.data()));
    } else {
      args.add(arg(DNNL_ARG_SRC, e->src_plain, x.raw_data()));
    }
    if (e->packed_weights) {
      args.add(arg(DNNL_ARG_WEIGHTS, e->packed_weights));
    } else if (e->w_reorder) {
      w_buf = Buffer(e->w_md.get_size());
      run_reorder(*e->w_reorder, e->w_plain, w.raw_data(), e->w_md, w_buf.data());
      args.add(arg(DNNL_ARG_WEIGHTS, e->w_md, w_buf.data()));
    } else {
      args.add(arg(DNNL_ARG_WEIGHTS, e->w_plain, w.raw_data()));
    }
    if (e->dst_reorder) {
      dst_buf = Buffer(e->dst_md.get_size());
      if (has_z) run_reorder(*e->z_reorder, e->dst_plain, ctx.input(3).raw_data(), e->dst_md, dst_buf.data());
      args.add(arg(DNNL_ARG_DST, e->dst_md, dst_buf.data()));
    } else {
      if (has_z && !z_in_y) std::memcpy(y.raw_data(), ctx.input(3).raw_data(), y.nbytes());
      args.add(arg(DNNL_ARG_DST, e->dst_plain, y.raw_data()));
    }
    if (has_bias) args.add(arg(DNNL_ARG_BIAS, e->bias_md, ctx.input(2).raw_data()));
    execute(e->prim, args, e->scratch_md);
    if (e->dst_reorder) run_reorder(*e->dst_reorder, e->dst_md, dst_buf.data(), e->dst_plain, y.raw_data());
    return Status::Ok();
  });
}

// Prepacks constant weights when the input's shape is declared: builds the primitive of that
// shape (the first run of it then only executes) and reorders the weights into its layout.
Result<std::shared_ptr<KernelState>> prepare(const KernelContext& ctx, bool fused) {
  OSPREY_ASSIGN_OR_RETURN(auto st, make_state(ctx, fused));
  ConvProblem pb;
  Shape hint;
  pb.x = &hint;
  if (st->weights.defined() && st->weights.numel() > 0 && ctx.shape_hint(0, &hint) &&
      hint.size() == st->weights.shape().size() + (st->block ? 1 : 0) && hint.size() >= 3) {
    const auto& ins = ctx.node().inputs;
    pb.w = &st->weights.shape();
    pb.has_bias = ins.size() > 2 && ins[2] != ir::kNoValue;
    pb.has_z = fused && ins.size() > 3 && ins[3] != ir::kNoValue;
    // The declared shape is only a hint: when it does not fit (a wrong value_info), the run
    // with the real shape reports what is wrong, and the weights stay plain until then.
    auto e = guarded("prepacking W", [&]() -> Status {
      return entry_for(ctx, *st, pb, kernel_threads(ctx), /*packable=*/true).status();
    });
    if (!e.ok() && e.code() == StatusCode::kResourceExhausted) return e;
  }
  return std::shared_ptr<KernelState>(std::move(st));
}

}  // namespace

int64_t winograd_convolutions_built() {
  return g_winograd_built.load(std::memory_order_relaxed);
}

Status conv(KernelContext& ctx) {
  return run_conv(ctx, false);
}
Status fused_conv(KernelContext& ctx) {
  return run_conv(ctx, true);
}
Result<std::shared_ptr<KernelState>> prepare_conv(const KernelContext& ctx) {
  return prepare(ctx, false);
}
Result<std::shared_ptr<KernelState>> prepare_fused_conv(const KernelContext& ctx) {
  return prepare(ctx, true);
}

}  // namespace osprey::cpu
