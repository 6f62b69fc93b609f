// Convolutions: Conv, ConvTranspose, ConvInteger, QLinearConv, and com.osprey QLinearConv (a
// QDQ-quantized convolution, below).
// Conv is im2col + the shared GEMM per (image, group); 1x1 stride-1 unpadded convs use the
// input directly. ConvTranspose is GEMM + col2im. Integer variants subtract zero points into
// int32 and reuse the same path. 16-bit floats are computed in float.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/gemm_core.h"
#include "kernels/reference/nn_util.h"

namespace osprey::ref {
namespace {

struct ConvDims {
  int64_t N = 0, C = 0, M = 0, group = 1;  // batch, input channels, output channels, groups
  Window w;
};

// floor(a / b) for b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Row-major strides of the spatial sizes.
std::vector<int64_t> spatial_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) st[i - 1] = st[i] * dims[i];
  return st;
}

// Advances a multi-index over dims [0, n) (row-major); returns false after the last one.
bool advance(std::vector<int64_t>& idx, const std::vector<int64_t>& dims, size_t n) {
  for (size_t d = n; d-- > 0;) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// Range [lo, hi) of positions o in [0, n_o) with 0 <= o*s + k0 < n_i.
void valid_range(int64_t n_o, int64_t s, int64_t k0, int64_t n_i, int64_t* lo, int64_t* hi) {
  *lo = std::clamp<int64_t>(floor_div(-k0 + s - 1, s), 0, n_o);
  *hi = std::clamp<int64_t>(floor_div(n_i - 1 - k0, s) + 1, *lo, n_o);
}

// col[(c, k...), out...] = x[c, out*stride - pad + k*dilation] (0 outside the input).
template <class T>
void im2col(const Window& w, int64_t channels, const T* x, T* col) {
  const size_t nd = static_cast<size_t>(w.nd), last = nd - 1;
  const int64_t in_sz = w.in_numel(), out_sz = w.out_numel(), kn = w.kernel_numel();
  const int64_t out_last = w.out[last];
  const auto in_st = spatial_strides(w.in);
  std::vector<int64_t> kidx(nd, 0), oidx(nd, 0);
  T* row = col;
  for (int64_t c = 0; c < channels; ++c) {
    const T* xc = x + c * in_sz;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t kf = 0; kf < kn; ++kf, row += out_sz, advance(kidx, w.kernel, nd)) {
      const int64_t k0 = kidx[last] * w.dilations[last] - w.pad_begin[last];
      int64_t lo, hi;
      valid_range(out_last, w.strides[last], k0, w.in[last], &lo, &hi);
      std::fill(oidx.begin(), oidx.end(), 0);
      for (int64_t ob = 0; ob < out_sz; ob += out_last, advance(oidx, w.out, last)) {
        T* r = row + ob;
        bool inside = true;
        int64_t off = 0;
        for (size_t d = 0; d < last; ++d) {
          const int64_t ix = oidx[d] * w.strides[d] - w.pad_begin[d] + kidx[d] * w.dilations[d];
          if (ix < 0 || ix >= w.in[d]) inside = false;
          off += ix * in_st[d];
        }
        if (!inside) {
          std::fill(r, r + out_last, T(0));
          continue;
        }
        const T* xr = xc + off + k0;
        const int64_t s = w.strides[last];
        std::fill(r, r + lo, T(0));
        if (s == 1) {
          std::copy(xr + lo, xr + hi, r + lo);
        } else {
          for (int64_t o = lo; o < hi; ++o) r[o] = xr[o * s];
        }
        std::fill(r + hi, r + out_last, T(0));
      }
    }
  }
}

// The adjoint of im2col for ConvTranspose: y[c, in*stride - pad + k*dilation] += col[(c, k...), in...]
// where w.in are the ConvTranspose input sizes and w.out its output sizes.
template <class T>
void col2im_add(const Window& w, int64_t channels, const T* col, T* y) {
  const size_t nd = static_cast<size_t>(w.nd), last = nd - 1;
  const int64_t in_sz = w.in_numel(), out_sz = w.out_numel(), kn = w.kernel_numel();
  const int64_t in_last = w.in[last];
  const auto out_st = spatial_strides(w.out);
  std::vector<int64_t> kidx(nd, 0), iidx(nd, 0);
  const T* row = col;
  for (int64_t c = 0; c < channels; ++c) {
    T* yc = y + c * out_sz;
    std::fill(kidx.begin(), kidx.end(), 0);
    for (int64_t kf = 0; kf < kn; ++kf, row += in_sz, advance(kidx, w.kernel, nd)) {
      const int64_t k0 = kidx[last] * w.dilations[last] - w.pad_begin[last];
      int64_t lo, hi;
      valid_range(in_last, w.strides[last], k0, w.out[last], &lo, &hi);
      std::fill(iidx.begin(), iidx.end(), 0);
      for (int64_t ib = 0; ib < in_sz; ib += in_last, advance(iidx, w.in, last)) {
        bool inside = true;
        int64_t off = 0;
        for (size_t d = 0; d < last; ++d) {
          const int64_t oy = iidx[d] * w.strides[d] - w.pad_begin[d] + kidx[d] * w.dilations[d];
          if (oy < 0 || oy >= w.out[d]) inside = false;
          off += oy * out_st[d];
        }
        if (!inside) continue;
        const T* r = row + ib;
        T* yr = yc + off + k0;
        const int64_t s = w.strides[last];
        for (int64_t i = lo; i < hi; ++i) yr[i * s] += r[i];
      }
    }
  }
}

// y[N, M, out...] = conv(x[N, C, in...], wt[M, C/group, k...]) (+ bias[M]).
template <class T>
Status conv_forward(const KernelContext& ctx, const ConvDims& d, const T* x, const T* wt,
                    const T* bias, T* y) {
  const Window& w = d.w;
  const int64_t Cg = d.C / d.group, Mg = d.M / d.group;
  const int64_t kn = w.kernel_numel(), in_sz = w.in_numel(), out_sz = w.out_numel();
  const int64_t kdim = Cg * kn;
  bool direct = true;  // 1x1, stride 1, no padding: the input is its own im2col
  for (int64_t i = 0; i < w.nd; ++i)
    direct = direct && w.kernel[i] == 1 && w.strides[i] == 1 && w.pad_begin[i] == 0 &&
             w.pad_end[i] == 0;
  // Many small independent problems (depthwise / grouped convs): one (n, g) pair per task,
  // each thread slot with its own im2col buffer. Otherwise the GEMM itself is split.
  ThreadPool* pool = ctx.pool();
  const int64_t tasks = d.N * d.group;
  const int64_t slots = pool && tasks >= 2 * pool->num_threads() ? pool->num_threads() : 1;
  Tensor colbuf;
  if (!direct && tasks > 0 && out_sz > 0) {
    OSPREY_ASSIGN_OR_RETURN(colbuf, ctx.new_tensor(dtype_v<T>, {slots, kdim, out_sz}));
  }
  auto run_task = [&](int64_t task, T* col, ThreadPool* gemm_pool) {
    const int64_t n = task / d.group, g = task % d.group;
    const T* xg = x + (n * d.C + g * Cg) * in_sz;
    const T* src = xg;
    if (!direct && out_sz > 0) {
      im2col(w, Cg, xg, col);
      src = col;
    }
    T* yg = y + (n * d.M + g * Mg) * out_sz;
    gemm<T>(false, false, Mg, out_sz, kdim, T(1), wt + g * Mg * kdim, kdim, src, out_sz, T(0), yg,
            out_sz, gemm_pool);
    if (bias)
      for (int64_t m = 0; m < Mg; ++m) {
        const T b = bias[g * Mg + m];
        T* row = yg + m * out_sz;
        for (int64_t i = 0; i < out_sz; ++i) row[i] += b;
      }
  };
  T* cols = colbuf.defined() ? colbuf.data<T>() : nullptr;
  if (slots == 1) {
    for (int64_t t = 0; t < tasks; ++t) run_task(t, cols, pool);
  } else {
    // Static round-robin over slots keeps each buffer private to one range of the loop.
    const int64_t per_task = Mg * kdim * out_sz;
    ctx.parallel_for(slots, per_task * ((tasks + slots - 1) / slots), [&](int64_t b, int64_t e) {
      for (int64_t slot = b; slot < e; ++slot)
        for (int64_t t = slot; t < tasks; t += slots)
          run_task(t, cols ? cols + slot * kdim * out_sz : nullptr, nullptr);
    });
  }
  return Status::Ok();
}

// y[N, M, out...] = conv_transpose(x[N, C, in...], wt[C, M/group, k...]) (+ bias[M]).
template <class T>
Status conv_transpose_forward(const KernelContext& ctx, const ConvDims& d, const T* x,
                              const T* wt, const T* bias, T* y) {
  const Window& w = d.w;
  const int64_t Cg = d.C / d.group, Mg = d.M / d.group;
  const int64_t kn = w.kernel_numel(), in_sz = w.in_numel(), out_sz = w.out_numel();
  const int64_t rows = Mg * kn;
  Tensor colbuf;
  if (d.N > 0 && in_sz > 0) {
    OSPREY_ASSIGN_OR_RETURN(colbuf, ctx.new_tensor(dtype_v<T>, {rows, in_sz}));
  }
  for (int64_t n = 0; n < d.N; ++n) {
    for (int64_t g = 0; g < d.group; ++g) {
      T* yg = y + (n * d.M + g * Mg) * out_sz;
      if (in_sz > 0) {
        const T* xg = x + (n * d.C + g * Cg) * in_sz;
        gemm<T>(true, false, rows, in_sz, Cg, T(1), wt + g * Cg * rows, rows, xg, in_sz, T(0),
                colbuf.data<T>(), in_sz, ctx.pool());
        col2im_add(w, Mg, colbuf.data<T>(), yg);
      }
      if (bias)
        for (int64_t m = 0; m < Mg; ++m) {
          const T b = bias[g * Mg + m];
          T* row = yg + m * out_sz;
          for (int64_t i = 0; i < out_sz; ++i) row[i] += b;
        }
    }
  }
  return Status::Ok();
}

// Shapes and attributes shared by Conv and ConvTranspose; fills everything but w.out / pads
// for ConvTranspose.
Status read_conv_dims(const KernelContext& ctx, int xi, int wi, bool transpose, ConvDims* d) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, xi, 3, 64));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, wi, 3, 64));
  const Tensor& x = ctx.input(xi);
  const Tensor& w = ctx.input(wi);
  if (w.rank() != x.rank())
    return invalid_argument("weights have rank ", w.rank(), " but the input has rank ", x.rank());
  d->group = ctx.attr_int("group", 1);
  if (d->group < 1) return invalid_argument("attribute group must be >= 1, got ", d->group);
  d->N = x.dim(0);
  d->C = x.dim(1);
  if (!transpose) {
    d->M = w.dim(0);
    if (w.dim(1) * d->group != d->C || d->M % d->group != 0)
      return invalid_argument("weights ", shape_to_string(w.shape()), " do not match input ",
                              shape_to_string(x.shape()), " with group ", d->group);
  } else {
    if (w.dim(0) != d->C || d->C % d->group != 0)
      return invalid_argument("weights ", shape_to_string(w.shape()), " do not match input ",
                              shape_to_string(x.shape()), " with group ", d->group);
    if (w.dim(1) > (int64_t{1} << 40) / d->group)
      return invalid_argument("weights dim 1 is too large");
    d->M = w.dim(1) * d->group;
  }
  d->w.in.assign(x.shape().begin() + 2, x.shape().end());
  d->w.kernel.assign(w.shape().begin() + 2, w.shape().end());
  d->w.nd = x.rank() - 2;
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != d->w.kernel)
    return invalid_argument("attribute kernel_shape does not match the weights ",
                            shape_to_string(w.shape()));
  return Status::Ok();
}

// ConvTranspose's output sizes and pads (ONNX formulas; output_shape wins over pads).
Status conv_transpose_window(const KernelContext& ctx, Window* w) {
  const int64_t nd = w->nd;
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "strides", nd, 1, 1, &w->strides));
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "dilations", nd, 1, 1, &w->dilations));
  std::vector<int64_t> out_pad;
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "output_padding", nd, 0, 0, &out_pad));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (static_cast<int64_t>(pads.size()) != 2 * nd)
    return invalid_argument("attribute pads has ", pads.size(), " values, expected ", 2 * nd);
  for (int64_t p : pads)
    if (p < 0) return invalid_argument("attribute pads has negative value ", p);
  std::vector<int64_t> out_shape = ctx.attr_ints("output_shape");
  if (out_shape.size() == static_cast<size_t>(nd + 2))
    out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (!out_shape.empty() && out_shape.size() != static_cast<size_t>(nd))
    return invalid_argument("attribute output_shape has ", out_shape.size(), " values, expected ",
                            nd);
  std::string auto_pad;
  OSPREY_RETURN_IF_ERROR(read_auto_pad(ctx, &auto_pad));
  w->pad_begin.assign(static_cast<size_t>(nd), 0);
  w->pad_end.assign(static_cast<size_t>(nd), 0);
  w->out.assign(static_cast<size_t>(nd), 0);
  constexpr int64_t kBig = int64_t{1} << 30;
  for (size_t i = 0; i < static_cast<size_t>(nd); ++i) {
    const int64_t in = w->in[i], s = w->strides[i], d = w->dilations[i], k = w->kernel[i];
    if (k <= 0) return invalid_argument("weights have an empty spatial dim");
    if (in > kBig || s > kBig || d > kBig || k > kBig || out_pad[i] > kBig || pads[i] > kBig ||
        pads[i + nd] > kBig)
      return invalid_argument("window sizes are too large");
    const int64_t full = s * std::max<int64_t>(in - 1, 0) + out_pad[i] + (k - 1) * d + 1;
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    if (!out_shape.empty() || same) {
      const int64_t out = !out_shape.empty() ? out_shape[i] : in * s;
      if (out < 0 || out > kBig) return invalid_argument("output_shape has invalid value ", out);
      const int64_t total = full - out;  // may be negative: extra outputs get no contribution
      const int64_t half = floor_div(total, 2);
      w->pad_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      w->pad_end[i] = total - w->pad_begin[i];
      w->out[i] = out;
    } else {
      if (auto_pad == "NOTSET") {
        w->pad_begin[i] = pads[i];
        w->pad_end[i] = pads[i + nd];
      }
      w->out[i] = full - w->pad_begin[i] - w->pad_end[i];
      if (w->out[i] < 0)
        return invalid_argument("pads are larger than the output on spatial dim ", i);
    }
  }
  return Status::Ok();
}

Status check_bias(const KernelContext& ctx, int bi, int64_t M, DType dtype) {
  if (!ctx.has_input(bi)) return Status::Ok();
  const Tensor& b = ctx.input(bi);
  if (b.dtype() != dtype)
    return invalid_argument("bias has type ", dtype_name(b.dtype()), ", expected ",
                            dtype_name(dtype));
  if (b.rank() != 1 || b.dim(0) != M)
    return invalid_argument("bias has shape ", shape_to_string(b.shape()), ", expected [", M, "]");
  return Status::Ok();
}

Shape output_shape_of(const ConvDims& d) {
  Shape s{d.N, d.M};
  s.insert(s.end(), d.w.out.begin(), d.w.out.end());
  return s;
}

// Copies a tensor of 16-bit floats (or anything) into a new float tensor.
template <class T>
Result<Tensor> to_float(const KernelContext& ctx, const Tensor& t) {
  OSPREY_ASSIGN_OR_RETURN(Tensor f, ctx.new_tensor(DType::kFloat32, t.shape()));
  const T* src = t.data<T>();
  float* dst = f.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) dst[i] = static_cast<float>(src[i]);
  return f;
}

// Runs conv or conv-transpose on float tensors of type T (16-bit floats via float).
template <class T>
Status run_float_conv(KernelContext& ctx, const ConvDims& d, bool transpose) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const bool has_b = ctx.has_input(2);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), output_shape_of(d)));
  auto run = [&](const auto* xp, const auto* wp, const auto* bp, auto* yp) {
    return transpose ? conv_transpose_forward(ctx, d, xp, wp, bp, yp)
                     : conv_forward(ctx, d, xp, wp, bp, yp);
  };
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    return run(x.data<T>(), w.data<T>(), has_b ? ctx.input(2).data<T>() : nullptr, y.data<T>());
  } else {
    OSPREY_ASSIGN_OR_RETURN(Tensor xf, to_float<T>(ctx, x));
    OSPREY_ASSIGN_OR_RETURN(Tensor wf, to_float<T>(ctx, w));
    Tensor bf;
    if (has_b) {
      OSPREY_ASSIGN_OR_RETURN(bf, to_float<T>(ctx, ctx.input(2)));
    }
    OSPREY_ASSIGN_OR_RETURN(Tensor yf, ctx.new_tensor(DType::kFloat32, y.shape()));
    OSPREY_RETURN_IF_ERROR(run(xf.data<float>(), wf.data<float>(),
                               has_b ? bf.data<float>() : nullptr, yf.data<float>()));
    for (int64_t i = 0; i < y.numel(); ++i) y.data<T>()[i] = T(yf.data<float>()[i]);
    return Status::Ok();
  }
}

// Zero point input `i` of an integer conv/matmul as int32 values: none -> {0}; checks dtype
// and that it has 1 or n elements.
Status read_zero_points(const KernelContext& ctx, int i, DType want, int64_t n, const char* what,
                        std::vector<int32_t>* out) {
  out->assign(1, 0);
  if (!ctx.has_input(i)) return Status::Ok();
  const Tensor& z = ctx.input(i);
  if (z.dtype() != want)
    return invalid_argument(what, " has type ", dtype_name(z.dtype()), ", expected ",
                            dtype_name(want));
  OSPREY_RETURN_IF_ERROR(per_axis_count(z, n, what));
  out->resize(static_cast<size_t>(z.numel()));
  for (int64_t k = 0; k < z.numel(); ++k) (*out)[static_cast<size_t>(k)] = static_cast<int32_t>(z.get_as_int64(k));
  return Status::Ok();
}

// t - zero_point as int32; zero points are per tensor, or per index of dim 0 (`per_dim0`).
Result<Tensor> subtract_zero_point(const KernelContext& ctx, const Tensor& t,
                                   const std::vector<int32_t>& zp) {
  OSPREY_ASSIGN_OR_RETURN(Tensor r, ctx.new_tensor(DType::kInt32, t.shape()));
  const int64_t inner = zp.size() > 1 && t.rank() > 0 && t.dim(0) > 0 ? t.numel() / t.dim(0) : t.numel();
  int32_t* dst = r.data<int32_t>();
  auto run = [&](const auto* src) {
    for (int64_t i = 0; i < t.numel(); ++i)
      dst[i] = static_cast<int32_t>(src[i]) - zp[zp.size() > 1 ? static_cast<size_t>(i / inner) : 0];
  };
  if (t.dtype() == DType::kUInt8) run(t.data<uint8_t>());
  else run(t.data<int8_t>());
  return r;
}

Status check_int8(const Tensor& t, const char* what) {
  if (t.dtype() != DType::kUInt8 && t.dtype() != DType::kInt8)
    return invalid_argument(what, " has type ", dtype_name(t.dtype()), ", expected uint8 or int8");
  return Status::Ok();
}

// Reads a float scale input: a scalar, or (n > 0) one per output channel.
Status read_scales(const KernelContext& ctx, int i, int64_t n, const char* what,
                   std::vector<float>* out) {
  if (!ctx.has_input(i)) return invalid_argument(what, " is missing");
  const Tensor& s = ctx.input(i);
  if (s.dtype() != DType::kFloat32)
    return invalid_argument(what, " has type ", dtype_name(s.dtype()), ", expected float32");
  OSPREY_RETURN_IF_ERROR(per_axis_count(s, n, what));
  out->assign(s.data<float>(), s.data<float>() + s.numel());
  return Status::Ok();
}

// QLinearConv's scales and zero points (inputs 1, 2, 4, 5, 6, 7), checked: x's and y's one
// value each, w's one or one per output channel (M); y's type is its zero point's.
struct QLinearParams {
  std::vector<float> xs, ws, ys;
  std::vector<int32_t> xzp, wzp, yzp;
  DType ytype = DType::kUInt8;
};
Status read_qlinear_params(const KernelContext& ctx, DType xtype, DType wtype, int64_t M,
                           QLinearParams* q) {
  OSPREY_RETURN_IF_ERROR(read_scales(ctx, 1, 0, "x_scale", &q->xs));
  OSPREY_RETURN_IF_ERROR(read_scales(ctx, 4, M, "w_scale", &q->ws));
  OSPREY_RETURN_IF_ERROR(read_scales(ctx, 6, 0, "y_scale", &q->ys));
  if (!ctx.has_input(7)) return invalid_argument("y_zero_point is missing");
  q->ytype = ctx.input(7).dtype();
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(7), "y_zero_point"));
  OSPREY_RETURN_IF_ERROR(read_zero_points(ctx, 2, xtype, 0, "x_zero_point", &q->xzp));
  OSPREY_RETURN_IF_ERROR(read_zero_points(ctx, 5, wtype, M, "w_zero_point", &q->wzp));
  return read_zero_points(ctx, 7, q->ytype, 0, "y_zero_point", &q->yzp);
}

}  // namespace

Status conv(KernelContext& ctx) {
  ConvDims d;
  OSPREY_RETURN_IF_ERROR(read_conv_dims(ctx, 0, 1, false, &d));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  OSPREY_RETURN_IF_ERROR(check_bias(ctx, 2, d.M, ctx.input(0).dtype()));
  OSPREY_RETURN_IF_ERROR(window_from_attrs(ctx, false, &d.w));
  return dispatch<FloatTypes>(ctx.input(0).dtype(), "Conv",
                              [&]<class T>() { return run_float_conv<T>(ctx, d, false); });
}

Status conv_transpose(KernelContext& ctx) {
  ConvDims d;
  OSPREY_RETURN_IF_ERROR(read_conv_dims(ctx, 0, 1, true, &d));
  OSPREY_RETURN_IF_ERROR(require_same_dtype(ctx, 0, 1));
  OSPREY_RETURN_IF_ERROR(check_bias(ctx, 2, d.M, ctx.input(0).dtype()));
  OSPREY_RETURN_IF_ERROR(conv_transpose_window(ctx, &d.w));
  return dispatch<FloatTypes>(ctx.input(0).dtype(), "ConvTranspose",
                              [&]<class T>() { return run_float_conv<T>(ctx, d, true); });
}

namespace {

// The dims of a 2-D quantized convolution of X [N, C, H, W] (already NCHW) by W [M, C/group,
// kH, kW] with the node's window attributes; `cl` names X channels-last in errors.
Status quantized_conv_dims(const KernelContext& ctx, const Tensor& x, const Tensor& w, bool cl, ConvDims* d) {
  d->group = ctx.attr_int("group", 1);
  if (d->group < 1) return invalid_argument("attribute group must be >= 1, got ", d->group);
  d->N = x.dim(0);
  d->C = x.dim(1);
  d->M = w.dim(0);
  if (w.dim(1) * d->group != d->C || d->M % d->group != 0)
    return invalid_argument("weights ", shape_to_string(w.shape()), " do not match input ",
                            shape_to_string(ctx.input(0).shape()), cl ? " (channels last)" : "",
                            " with group ", d->group);
  d->w.in.assign(x.shape().begin() + 2, x.shape().end());
  d->w.kernel.assign(w.shape().begin() + 2, w.shape().end());
  d->w.nd = 2;
  if (ctx.has_attr("kernel_shape") && ctx.attr_ints("kernel_shape") != d->w.kernel)
    return invalid_argument("attribute kernel_shape does not match the weights ", shape_to_string(w.shape()));
  return window_from_attrs(ctx, false, &d->w);
}

// The int32 sums of ConvInteger(x, w, x_zero_point?, w_zero_point?) into *acc: the output
// when `as_output`, else a tensor of its own. channels_last = 1 (ConvIntegerToFloat, 2-D): X is
// [N, H, W, C]; the sums stay NCHW.
Status integer_conv(KernelContext& ctx, bool as_output, Tensor* acc) {
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  ConvDims d;
  Tensor x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  OSPREY_RETURN_IF_ERROR(check_int8(x, "input x"));
  OSPREY_RETURN_IF_ERROR(check_int8(w, "input w"));
  if (cl) {
    OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
    OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 4, 4));
    OSPREY_ASSIGN_OR_RETURN(x, transposed(x, {0, 3, 1, 2}));
    OSPREY_RETURN_IF_ERROR(quantized_conv_dims(ctx, x, w, true, &d));
  } else {
    OSPREY_RETURN_IF_ERROR(read_conv_dims(ctx, 0, 1, false, &d));
    OSPREY_RETURN_IF_ERROR(window_from_attrs(ctx, false, &d.w));
  }
  std::vector<int32_t> xzp, wzp;
  OSPREY_RETURN_IF_ERROR(read_zero_points(ctx, 2, x.dtype(), 0, "x_zero_point", &xzp));
  OSPREY_RETURN_IF_ERROR(read_zero_points(ctx, 3, w.dtype(), d.M, "w_zero_point", &wzp));
  OSPREY_ASSIGN_OR_RETURN(Tensor xi, subtract_zero_point(ctx, x, xzp));
  OSPREY_ASSIGN_OR_RETURN(Tensor wi, subtract_zero_point(ctx, w, wzp));
  if (as_output) {
    OSPREY_ASSIGN_OR_RETURN(*acc, ctx.new_output(0, DType::kInt32, output_shape_of(d)));
  } else {
    OSPREY_ASSIGN_OR_RETURN(*acc, ctx.new_tensor(DType::kInt32, output_shape_of(d)));
  }
  return conv_forward<int32_t>(ctx, d, xi.data<int32_t>(), wi.data<int32_t>(), nullptr, acc->data<int32_t>());
}

}  // namespace

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32.
Status conv_integer(KernelContext& ctx) {
  Tensor y;
  return integer_conv(ctx, true, &y);
}

// com.osprey ConvIntegerToFloat(x, w, x_zero_point?, w_zero_point?, scale, bias?), ConvInteger's
// attributes plus activation ("", Relu, or Clip with activation_params [min, max]): a
// dynamically quantized convolution, ConvInteger -> Cast -> Mul(scale) [-> Add(bias)] [-> Relu |
// Clip], as one op (matmul_integer_fusion makes it): y = act(float(acc) * scale + bias[m]), the
// same float operations in the same order. scale is one float32 value, bias float32 [M].
Status conv_integer_to_float(KernelContext& ctx) {
  const std::string act = ctx.attr_string("activation", "");
  const std::vector<float> params = ctx.attr_floats("activation_params");
  if (!(act.empty() || act == "Relu" || act == "Clip") || params.size() != (act == "Clip" ? 2u : 0u))
    return invalid_argument("activation '", act, "' with ", params.size(),
                            " activation_params: ConvIntegerToFloat takes none, Relu, or Clip [min, max]");
  if (!ctx.has_input(4)) return invalid_argument("scale (input 4) is missing");
  const Tensor& scale = ctx.input(4);
  if (scale.dtype() != DType::kFloat32 || scale.numel() != 1)
    return invalid_argument("scale has type ", dtype_name(scale.dtype()), " and shape ", shape_to_string(scale.shape()),
                            "; expected one float32 value");
  Tensor acc;
  OSPREY_RETURN_IF_ERROR(integer_conv(ctx, false, &acc));
  const int64_t M = acc.dim(1), plane = M > 0 && acc.dim(0) > 0 ? acc.numel() / (acc.dim(0) * M) : 0;
  const bool has_bias = ctx.has_input(5);
  if (has_bias && (ctx.input(5).dtype() != DType::kFloat32 || ctx.input(5).shape() != Shape{M}))
    return invalid_argument("bias has type ", dtype_name(ctx.input(5).dtype()), " and shape ",
                            shape_to_string(ctx.input(5).shape()), "; expected float32 [", M, "]");
  const bool cl = ctx.attr_int("channels_last", 0) == 1;
  Tensor y;
  if (cl) {
    OSPREY_ASSIGN_OR_RETURN(y, ctx.new_tensor(DType::kFloat32, acc.shape()));
  } else {
    OSPREY_ASSIGN_OR_RETURN(y, ctx.new_output(0, DType::kFloat32, acc.shape()));
  }
  const float s = scale.data<float>()[0];
  const float* bias = has_bias ? ctx.input(5).data<float>() : nullptr;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const float v = static_cast<float>(acc.data<int32_t>()[i]) * s;
    const float u = bias ? v + bias[i / plane % M] : v;
    y.data<float>()[i] = act == "Relu" ? (u > 0 ? u : 0.0f) : act == "Clip" ? (u < params[0] ? params[0] : (u > params[1] ? params[1] : u)) : u;
  }
  if (!cl) return Status::Ok();
  OSPREY_ASSIGN_OR_RETURN(Tensor nhwc, transposed(y, {0, 2, 3, 1}));
  OSPREY_ASSIGN_OR_RETURN(Tensor out, ctx.new_output(0, DType::kFloat32, nhwc.shape()));
  if (out.nbytes() > 0) std::memcpy(out.raw_data(), nhwc.raw_data(), out.nbytes());
  return Status::Ok();
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?) -> quantized y.
Status qlinear_conv(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return invalid_argument("QLinearConv needs at least 8 inputs");
  ConvDims d;
  OSPREY_RETURN_IF_ERROR(read_conv_dims(ctx, 0, 3, false, &d));
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(3);
  OSPREY_RETURN_IF_ERROR(check_int8(x, "input x"));
  OSPREY_RETURN_IF_ERROR(check_int8(w, "input w"));
  OSPREY_RETURN_IF_ERROR(window_from_attrs(ctx, false, &d.w));
  QLinearParams q;
  OSPREY_RETURN_IF_ERROR(read_qlinear_params(ctx, x.dtype(), w.dtype(), d.M, &q));
  const auto &xs = q.xs, &ws = q.ws, &ys = q.ys;
  const auto &xzp = q.xzp, &wzp = q.wzp, &yzp = q.yzp;
  const DType ytype = q.ytype;
  OSPREY_RETURN_IF_ERROR(check_bias(ctx, 8, d.M, DType::kInt32));
  OSPREY_ASSIGN_OR_RETURN(Tensor xi, subtract_zero_point(ctx, x, xzp));
  OSPREY_ASSIGN_OR_RETURN(Tensor wi, subtract_zero_point(ctx, w, wzp));
  const Shape yshape = output_shape_of(d);
  OSPREY_ASSIGN_OR_RETURN(Tensor acc, ctx.new_tensor(DType::kInt32, yshape));
  OSPREY_RETURN_IF_ERROR(conv_forward<int32_t>(
      ctx, d, xi.data<int32_t>(), wi.data<int32_t>(),
      ctx.has_input(8) ? ctx.input(8).data<int32_t>() : nullptr, acc.data<int32_t>()));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, ytype, yshape));
  const int64_t out_sz = d.w.out_numel();
  auto requantize = [&]<class Q>(Q* out) {
    const int32_t* a = acc.data<int32_t>();
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t m = 0; m < d.M; ++m) {
        const float scale = xs[0] * ws[ws.size() > 1 ? static_cast<size_t>(m) : 0] / ys[0];
        const int64_t base = (n * d.M + m) * out_sz;
        for (int64_t i = 0; i < out_sz; ++i)
          out[base + i] = saturate_round<Q>(
              static_cast<double>(std::nearbyint(static_cast<float>(a[base + i]) * scale)) + yzp[0]);
      }
  };
  if (ytype == DType::kUInt8) requantize(y.data<uint8_t>());
  else requantize(y.data<int8_t>());
  return Status::Ok();
}

namespace {

// [N, H, W, C] <-> [N, C, H, W] for one-byte elements (to_first: NHWC -> NCHW).
Result<Tensor> permute_bytes(const KernelContext& ctx, const Tensor& t, bool to_first) {
  const Shape& s = t.shape();
  const Shape out = to_first ? Shape{s[0], s[3], s[1], s[2]} : Shape{s[0], s[2], s[3], s[1]};
  OSPREY_ASSIGN_OR_RETURN(Tensor r, ctx.new_tensor(t.dtype(), out));
  const auto* src = static_cast<const uint8_t*>(t.raw_data());
  auto* dst = static_cast<uint8_t*>(r.raw_data());
  const int64_t N = s[0];
  const int64_t C = to_first ? s[3] : s[1], P = to_first ? s[1] * s[2] : s[2] * s[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t p = 0; p < P; ++p) {
        const int64_t nhwc = (n * P + p) * C + c, nchw = (n * C + c) * P + p;
        if (to_first) dst[nchw] = src[nhwc];
        else dst[nhwc] = src[nchw];
      }
  return r;
}

}  // namespace

// com.osprey QLinearConv (made by the qdq_conv_fusion pass from DequantizeLinear -> Conv
// [-> Relu / Clip] -> QuantizeLinear): QLinearConv's inputs, except that B is float32 and is
// added after the scaling, as the QDQ graph adds it:
//   y = acc * x_scale * w_scale[m] + B[m], then the activation ("" / Relu / Clip with
//   activation_params [min, max]), then QuantizeLinear(y, y_scale, y_zero_point),
// or (made by qoperator_rewrite from ONNX's QLinearConv) B is int32 and the arithmetic ONNX's:
//   y = round((acc + B[m]) * (x_scale * w_scale[m] / y_scale)) + y_zero_point,
// where acc = sum (x - x_zp) (w - w_zp) is exact in int32. 2-D only; channels_last = 1: x and y
// are [N, H, W, C] (W stays [M, C/group, kH, kW]).
Status fused_qlinear_conv(KernelContext& ctx) {
  if (ctx.num_inputs() < 8) return invalid_argument("QLinearConv needs at least 8 inputs");
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 4, 4));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 3, 4, 4));
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(0), "input x"));
  OSPREY_RETURN_IF_ERROR(check_int8(ctx.input(3), "input w"));
  Tensor x = ctx.input(0);
  if (cl) {
    OSPREY_ASSIGN_OR_RETURN(x, permute_bytes(ctx, x, true));
  }
  const Tensor& w = ctx.input(3);
  ConvDims d;
  OSPREY_RETURN_IF_ERROR(quantized_conv_dims(ctx, x, w, cl == 1, &d));
  QLinearParams q;
  OSPREY_RETURN_IF_ERROR(read_qlinear_params(ctx, x.dtype(), w.dtype(), d.M, &q));
  const auto &xs = q.xs, &ws = q.ws, &ys = q.ys;
  const auto &xzp = q.xzp, &wzp = q.wzp, &yzp = q.yzp;
  const DType ytype = q.ytype;
  // B: float32, added after the scaling (a QDQ graph's bias), or int32 in units of x_scale *
  // w_scale[m], added to the sums before it (ONNX QLinearConv's, from qoperator_rewrite).
  const bool int_bias = ctx.has_input(8) && ctx.input(8).dtype() == DType::kInt32;
  OSPREY_RETURN_IF_ERROR(check_bias(ctx, 8, d.M, int_bias ? DType::kInt32 : DType::kFloat32));
  const std::string act = ctx.attr_string("activation", "");
  const std::vector<float> params = ctx.attr_floats("activation_params");
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (act == "Relu" && params.empty()) {
    lo = 0;
  } else if (act == "Clip" && params.size() == 2) {
    lo = params[0];
    hi = params[1];
  } else if (!(act.empty() && params.empty())) {
    return invalid_argument("activation '", act, "' with ", params.size(),
                            " activation_params: QLinearConv takes none, Relu, or Clip [min, max]");
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor xi, subtract_zero_point(ctx, x, xzp));
  OSPREY_ASSIGN_OR_RETURN(Tensor wi, subtract_zero_point(ctx, w, wzp));
  const Shape yshape = output_shape_of(d);
  OSPREY_ASSIGN_OR_RETURN(Tensor acc, ctx.new_tensor(DType::kInt32, yshape));
  OSPREY_RETURN_IF_ERROR(conv_forward<int32_t>(ctx, d, xi.data<int32_t>(), wi.data<int32_t>(), nullptr,
                                               acc.data<int32_t>()));
  Tensor y;
  if (cl) {
    OSPREY_ASSIGN_OR_RETURN(y, ctx.new_tensor(ytype, yshape));
  } else {
    OSPREY_ASSIGN_OR_RETURN(y, ctx.new_output(0, ytype, yshape));
  }
  const float* bias = ctx.has_input(8) && !int_bias ? ctx.input(8).data<float>() : nullptr;
  const int32_t* ibias = int_bias ? ctx.input(8).data<int32_t>() : nullptr;
  const int64_t out_sz = d.w.out_numel();
  auto requantize = [&]<class Q>(Q* out) {
    const int32_t* a = acc.data<int32_t>();
    for (int64_t n = 0; n < d.N; ++n)
      for (int64_t m = 0; m < d.M; ++m) {
        const float scale = xs[0] * ws[ws.size() > 1 ? static_cast<size_t>(m) : 0];
        const int64_t base = (n * d.M + m) * out_sz;
        if (ibias) {  // ONNX QLinearConv's arithmetic: (acc + B) * (x_scale * w_scale / y_scale)
          const float mult = scale / ys[0];
          for (int64_t i = 0; i < out_sz; ++i) {
            const float v = std::min(hi / ys[0], std::max(lo / ys[0], static_cast<float>(a[base + i] + ibias[m]) * mult));
            out[base + i] = saturate_round<Q>(static_cast<double>(std::nearbyint(v)) + yzp[0]);
          }
          continue;
        }
        const float b = bias ? bias[m] : 0.0f;
        for (int64_t i = 0; i < out_sz; ++i) {
          const float v = std::min(hi, std::max(lo, static_cast<float>(a[base + i]) * scale + b));
          out[base + i] = saturate_round<Q>(static_cast<double>(std::nearbyint(v / ys[0])) + yzp[0]);
        }
      }
  };
  if (ytype == DType::kUInt8) requantize(y.data<uint8_t>());
  else requantize(y.data<int8_t>());
  if (!cl) return Status::Ok();
  OSPREY_ASSIGN_OR_RETURN(Tensor nhwc, permute_bytes(ctx, y, false));
  OSPREY_ASSIGN_OR_RETURN(Tensor out, ctx.new_output(0, ytype, nhwc.shape()));
  if (out.nbytes() > 0) std::memcpy(out.raw_data(), nhwc.raw_data(), out.nbytes());
  return Status::Ok();
}

}  // namespace osprey::ref
