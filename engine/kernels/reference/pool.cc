// Pooling: MaxPool (with Indices), AveragePool, LpPool, their Global variants, MaxUnpool.
// Windows are enumerated once per chunk of output positions as lists of input offsets
// ("taps") and then applied to every (batch, channel) plane.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/reference/common.h"
#include "kernels/reference/nn_util.h"
#include "kernels/reference/qparam.h"

namespace osprey::ref {
namespace {

// Input positions of the windows of output positions [o_begin, o_end).
struct Taps {
  std::vector<int64_t> start;   // window j uses off[start[j] .. start[j+1])
  std::vector<int64_t> off;     // row-major spatial offsets
  std::vector<int64_t> off_cm;  // column-major spatial offsets (MaxPool storage_order = 1)
  std::vector<int64_t> padded;  // window positions inside the padded input (count_include_pad)
};

// floor(a / b) for b > 0.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Range [lo, hi) of kk in [0, k) with begin <= base + kk * dil < end.
void tap_range(int64_t base, int64_t dil, int64_t k, int64_t begin, int64_t end, int64_t* lo,
               int64_t* hi) {
  *lo = std::clamp<int64_t>(floor_div(begin - base + dil - 1, dil), 0, k);
  *hi = std::clamp<int64_t>(floor_div(end - 1 - base, dil) + 1, *lo, k);
}

void build_taps(const Window& w, int64_t o_begin, int64_t o_end, bool col_major, Taps* t) {
  const size_t nd = static_cast<size_t>(w.nd);
  std::vector<int64_t> st(nd, 1), st_cm(nd, 1), oidx(nd);
  for (size_t d = nd; d-- > 1;) st[d - 1] = st[d] * w.in[d];
  for (size_t d = 1; d < nd; ++d) st_cm[d] = st_cm[d - 1] * w.in[d - 1];
  std::vector<std::vector<int64_t>> valid(nd);  // valid input indices per dim
  std::vector<size_t> k(nd);
  t->start.assign(1, 0);
  t->off.clear();
  t->off_cm.clear();
  t->padded.clear();
  for (int64_t o = o_begin; o < o_end; ++o) {
    int64_t rem = o, padded = 1;
    for (size_t d = nd; d-- > 0;) {
      oidx[d] = rem % w.out[d];
      rem /= w.out[d];
    }
    bool empty = false;
    for (size_t d = 0; d < nd; ++d) {
      // Taps kk in [0, kernel) sit at base + kk * dilation; count them arithmetically so
      // huge kernels over small inputs cost nothing.
      const int64_t base = oidx[d] * w.strides[d] - w.pad_begin[d], dil = w.dilations[d];
      int64_t lo, hi;
      tap_range(base, dil, w.kernel[d], 0, w.in[d], &lo, &hi);
      valid[d].clear();
      for (int64_t kk = lo; kk < hi; ++kk) valid[d].push_back(base + kk * dil);
      tap_range(base, dil, w.kernel[d], -w.pad_begin[d], w.in[d] + w.pad_end[d], &lo, &hi);
      padded *= hi - lo;
      empty = empty || valid[d].empty();
    }
    t->padded.push_back(padded);
    if (!empty) {
      std::fill(k.begin(), k.end(), 0);
      while (true) {
        int64_t off = 0, off_cm = 0;
        for (size_t d = 0; d < nd; ++d) {
          off += valid[d][k[d]] * st[d];
          off_cm += valid[d][k[d]] * st_cm[d];
        }
        t->off.push_back(off);
        if (col_major) t->off_cm.push_back(off_cm);
        size_t d = nd;
        while (d-- > 0) {
          if (++k[d] < valid[d].size()) break;
          k[d] = 0;
        }
        if (d == static_cast<size_t>(-1)) break;
      }
    }
    t->start.push_back(static_cast<int64_t>(t->off.size()));
  }
}

enum class PoolKind { kMax, kAverage, kLp };

struct PoolArgs {
  PoolKind kind = PoolKind::kMax;
  bool count_include_pad = false;
  double p = 2.0;     // LpPool
  bool col_major = false;  // MaxPool storage_order
};

// Pools x[planes, in...] into y[planes, out...] (and indices for MaxPool when non-null).
template <class T>
void pool_planes(const Window& w, int64_t planes, const PoolArgs& a, const T* x, T* y,
                 int64_t* indices) {
  using C = compute_t<T>;
  const int64_t in_sz = w.in_numel(), out_sz = w.out_numel();
  int64_t kn = 1;  // most taps a window can have, saturated
  for (int64_t d = 0; d < w.nd; ++d)
    kn = std::min<int64_t>(kn * std::max<int64_t>(std::min(w.kernel[d], w.in[d]), 1), int64_t{1} << 20);
  const int64_t chunk = std::clamp<int64_t>((int64_t{1} << 20) / kn, 1, 4096);
  Taps t;
  for (int64_t o0 = 0; o0 < out_sz; o0 += chunk) {
    const int64_t o1 = std::min(out_sz, o0 + chunk);
    build_taps(w, o0, o1, a.col_major && indices, &t);
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = x + pl * in_sz;
      for (int64_t o = o0; o < o1; ++o) {
        const int64_t j0 = t.start[o - o0], j1 = t.start[o - o0 + 1];
        const int64_t yi = pl * out_sz + o;
        if (a.kind == PoolKind::kMax) {
          C best = std::numeric_limits<C>::lowest();
          int64_t bj = -1;
          for (int64_t j = j0; j < j1; ++j) {
            const C v = static_cast<C>(xp[t.off[j]]);
            if (bj < 0 || v > best) {
              best = v;
              bj = j;
            }
          }
          y[yi] = cast_to<T>(best);
          if (indices)
            indices[yi] = bj < 0 ? -1 : pl * in_sz + (a.col_major ? t.off_cm[bj] : t.off[bj]);
        } else if (a.kind == PoolKind::kAverage) {
          double sum = 0;
          for (int64_t j = j0; j < j1; ++j) sum += static_cast<double>(static_cast<C>(xp[t.off[j]]));
          const int64_t n = a.count_include_pad ? t.padded[o - o0] : j1 - j0;
          y[yi] = cast_to<T>(static_cast<C>(sum / static_cast<double>(n)));
        } else {
          double sum = 0;
          for (int64_t j = j0; j < j1; ++j)
            sum += std::pow(std::fabs(static_cast<double>(static_cast<C>(xp[t.off[j]]))), a.p);
          y[yi] = cast_to<T>(static_cast<C>(std::pow(sum, 1.0 / a.p)));
        }
      }
    }
  }
}

using MaxPoolTypes = TypeList<float, double, Float16, BFloat16, int8_t, uint8_t>;

Status run_pool(KernelContext& ctx, const PoolArgs& args, bool ceil_mode, const char* what) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 64));
  const Tensor& x = ctx.input(0);
  if (!ctx.has_attr("kernel_shape")) return invalid_argument("attribute kernel_shape is required");
  Window w;
  w.in.assign(x.shape().begin() + 2, x.shape().end());
  w.kernel = ctx.attr_ints("kernel_shape");
  OSPREY_RETURN_IF_ERROR(window_from_attrs(ctx, ceil_mode, &w));
  Shape yshape{x.dim(0), x.dim(1)};
  yshape.insert(yshape.end(), w.out.begin(), w.out.end());
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), yshape));
  Tensor ind;
  if (args.kind == PoolKind::kMax && ctx.output_requested(1)) {
    OSPREY_ASSIGN_OR_RETURN(ind, ctx.new_output(1, DType::kInt64, yshape));
  }
  const int64_t planes = x.dim(0) * x.dim(1);
  if (args.kind == PoolKind::kMax)
    return dispatch<MaxPoolTypes>(x.dtype(), what, [&]<class T>() {
      pool_planes<T>(w, planes, args, x.data<T>(), y.data<T>(),
                     ind.defined() ? ind.data<int64_t>() : nullptr);
      return Status::Ok();
    });
  return dispatch<FloatTypes>(x.dtype(), what, [&]<class T>() {
    pool_planes<T>(w, planes, args, x.data<T>(), y.data<T>(), nullptr);
    return Status::Ok();
  });
}

// Global pools: one window covering all spatial dims.
Status run_global_pool(KernelContext& ctx, PoolKind kind, double p, const char* what) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  Shape yshape = x.shape();
  for (size_t d = 2; d < yshape.size(); ++d) yshape[d] = 1;
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t sz = planes > 0 ? x.numel() / planes : 0;
  if (sz == 0 && planes > 0) return invalid_argument("input has an empty spatial dim");
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), yshape));
  return dispatch<FloatTypes>(x.dtype(), what, [&]<class T>() {
    using C = compute_t<T>;
    for (int64_t pl = 0; pl < planes; ++pl) {
      const T* xp = x.data<T>() + pl * sz;
      double acc = kind == PoolKind::kMax ? -std::numeric_limits<double>::infinity() : 0.0;
      for (int64_t i = 0; i < sz; ++i) {
        const double v = static_cast<double>(static_cast<C>(xp[i]));
        if (kind == PoolKind::kMax) acc = v > acc ? v : acc;
        else if (kind == PoolKind::kAverage) acc += v;
        else acc += std::pow(std::fabs(v), p);
      }
      if (kind == PoolKind::kAverage) acc /= static_cast<double>(sz);
      if (kind == PoolKind::kLp) acc = std::pow(acc, 1.0 / p);
      y.data<T>()[pl] = cast_to<T>(static_cast<C>(acc));
    }
    return Status::Ok();
  });
}

// LpPool's p: a float attribute in opset 1, an int from opset 2.
Status read_p(const KernelContext& ctx, double* p) {
  const ir::Attribute* a = ctx.node().find_attribute("p");
  *p = 2.0;
  if (a) *p = a->type == ir::Attribute::Type::kFloat ? static_cast<double>(a->f)
                                                      : static_cast<double>(a->i);
  if (!(*p > 0) || !std::isfinite(*p)) return invalid_argument("attribute p must be > 0, got ", *p);
  return Status::Ok();
}

}  // namespace

Status max_pool(KernelContext& ctx) {
  PoolArgs a;
  a.kind = PoolKind::kMax;
  const int64_t order = ctx.attr_int("storage_order", 0);
  if (order != 0 && order != 1) return invalid_argument("attribute storage_order must be 0 or 1");
  a.col_major = order == 1;
  return run_pool(ctx, a, ctx.attr_int("ceil_mode", 0) != 0, "MaxPool");
}

Status average_pool(KernelContext& ctx) {
  PoolArgs a;
  a.kind = PoolKind::kAverage;
  a.count_include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  return run_pool(ctx, a, ctx.attr_int("ceil_mode", 0) != 0, "AveragePool");
}

Status lp_pool(KernelContext& ctx) {
  PoolArgs a;
  a.kind = PoolKind::kLp;
  OSPREY_RETURN_IF_ERROR(read_p(ctx, &a.p));
  return run_pool(ctx, a, ctx.attr_int("ceil_mode", 0) != 0, "LpPool");
}

Status global_average_pool(KernelContext& ctx) {
  return run_global_pool(ctx, PoolKind::kAverage, 0, "GlobalAveragePool");
}

Status global_max_pool(KernelContext& ctx) {
  return run_global_pool(ctx, PoolKind::kMax, 0, "GlobalMaxPool");
}

Status global_lp_pool(KernelContext& ctx) {
  double p;
  OSPREY_RETURN_IF_ERROR(read_p(ctx, &p));
  return run_global_pool(ctx, PoolKind::kLp, p, "GlobalLpPool");
}

// com.microsoft QLinearAveragePool(X, x_scale, x_zero_point?, y_scale, y_zero_point?):
// AveragePool's windows over the dequantized X (padding counts as 0.0 where
// count_include_pad), each mean quantized to y's scale and zero point. channels_last 1: X is
// [N, spatial..., C] (and so is Y).
Status qlinear_average_pool(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_inputs(ctx, {0, 1, 3}, "QLinearAveragePool"));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 64));
  const Tensor& x = ctx.input(0);
  QParam qx, qy;
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "x", 1, 2, 0, DType::kUInt8, &qx));
  OSPREY_RETURN_IF_ERROR(read_qparam(ctx, "y", 3, 4, 0, DType::kUInt8, &qy));
  const int64_t cl = ctx.attr_int("channels_last", 0);
  if (cl != 0 && cl != 1) return invalid_argument("attribute channels_last must be 0 or 1, got ", cl);
  if (!ctx.has_attr("kernel_shape")) return invalid_argument("attribute kernel_shape is required");
  const int64_t rank = x.rank(), n = x.dim(0), c = cl ? x.dim(rank - 1) : x.dim(1);
  Window w;
  w.in.assign(x.shape().begin() + (cl ? 1 : 2), x.shape().end() - (cl ? 1 : 0));
  w.kernel = ctx.attr_ints("kernel_shape");
  OSPREY_RETURN_IF_ERROR(window_from_attrs(ctx, ctx.attr_int("ceil_mode", 0) != 0, &w));
  Shape yshape{n};
  if (!cl) yshape.push_back(c);
  yshape.insert(yshape.end(), w.out.begin(), w.out.end());
  if (cl) yshape.push_back(c);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, qy.type, yshape));
  const int64_t in_sz = w.in_numel(), out_sz = w.out_numel();
  // Planes [N * C, spatial] of dequantized values, pooled as floats.
  std::vector<float> planes(static_cast<size_t>(n * c * in_sz)), pooled(static_cast<size_t>(n * c * out_sz));
  auto plane_index = [&](int64_t i, int64_t sz) {  // channels-last element i -> its plane position
    const int64_t ch = i % c, p = i / c % sz, b = i / (c * sz);
    return (b * c + ch) * sz + p;
  };
  for (int64_t i = 0; i < x.numel(); ++i)
    planes[static_cast<size_t>(cl ? plane_index(i, in_sz) : i)] = qx.dequantize(byte_at(x, i));
  PoolArgs args;
  args.kind = PoolKind::kAverage;
  args.count_include_pad = ctx.attr_int("count_include_pad", 0) != 0;
  pool_planes<float>(w, n * c, args, planes.data(), pooled.data(), nullptr);
  for (int64_t i = 0; i < y.numel(); ++i)
    store_byte(y, i, qy.quantize(pooled[static_cast<size_t>(cl ? plane_index(i, out_sz) : i)]));
  return Status::Ok();
}

// MaxUnpool(X, I, output_shape?): Y (zeros) with Y.flat[I[i]] = X[i].
Status max_unpool(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 3, 64));
  const Tensor& x = ctx.input(0);
  if (!ctx.has_input(1)) return invalid_argument("input I is missing");
  const Tensor& ind = ctx.input(1);
  if (ind.dtype() != DType::kInt64 || ind.shape() != x.shape())
    return invalid_argument("input I must be int64 with the shape of X ",
                            shape_to_string(x.shape()), ", got ", ind.debug_string());
  if (!ctx.has_attr("kernel_shape")) return invalid_argument("attribute kernel_shape is required");
  Window w;
  w.in.assign(x.shape().begin() + 2, x.shape().end());
  w.kernel = ctx.attr_ints("kernel_shape");
  w.nd = static_cast<int64_t>(w.in.size());
  if (static_cast<int64_t>(w.kernel.size()) != w.nd)
    return invalid_argument("kernel_shape has ", w.kernel.size(), " values, expected ", w.nd);
  OSPREY_RETURN_IF_ERROR(spatial_attr(ctx, "strides", w.nd, 1, 1, &w.strides));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * w.nd, 0));
  if (static_cast<int64_t>(pads.size()) != 2 * w.nd)
    return invalid_argument("attribute pads has ", pads.size(), " values, expected ", 2 * w.nd);
  // The indices address the default output shape; an explicit output_shape places those
  // coordinates into a tensor of that shape (the extra positions stay zero).
  Shape natural{x.dim(0), x.dim(1)};
  for (size_t d = 0; d < static_cast<size_t>(w.nd); ++d) {
    const int64_t k = w.kernel[d], s = w.strides[d];
    if (k <= 0 || k > (int64_t{1} << 30) || s > (int64_t{1} << 30) || pads[d] < 0 ||
        pads[d + w.nd] < 0 || pads[d] > (int64_t{1} << 30) || pads[d + w.nd] > (int64_t{1} << 30))
      return invalid_argument("invalid kernel_shape, strides or pads");
    natural.push_back((w.in[d] - 1) * s + k - pads[d] - pads[d + w.nd]);
  }
  Shape yshape = natural;
  if (ctx.has_input(2)) {
    const Tensor& os = ctx.input(2);
    if (os.rank() != 1 || os.numel() != x.rank() || !dtype_is_integer(os.dtype()))
      return invalid_argument("output_shape must be an integer tensor of ", x.rank(),
                              " values, got ", os.debug_string());
    yshape = os.to_int64_vector();
  }
  for (size_t d = 0; d < yshape.size(); ++d)
    if (natural[d] < 0 || yshape[d] < 0 || (d < 2 && yshape[d] != natural[d]))
      return invalid_argument("output shape ", shape_to_string(yshape), " is invalid for input ",
                              shape_to_string(x.shape()));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), yshape));
  const int64_t natural_numel = shape_numel(natural);
  const auto y_strides = strides_of(yshape);
  std::vector<int64_t> target(static_cast<size_t>(x.numel()));
  const int64_t* idx = ind.data<int64_t>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    if (idx[i] < 0 || idx[i] >= natural_numel)
      return invalid_argument("index ", idx[i], " in I is out of range for output ",
                              shape_to_string(natural));
    int64_t rem = idx[i], off = 0;
    for (size_t d = natural.size(); d-- > 0;) {
      const int64_t c = rem % natural[d];
      rem /= natural[d];
      if (c >= yshape[d])
        return invalid_argument("index ", idx[i], " in I falls outside output_shape ",
                                shape_to_string(yshape));
      off += c * y_strides[d];
    }
    target[static_cast<size_t>(i)] = off;
  }
  return dispatch<NumericTypes>(x.dtype(), "MaxUnpool", [&]<class T>() {
    for (int64_t i = 0; i < x.numel(); ++i) y.data<T>()[target[static_cast<size_t>(i)]] = x.data<T>()[i];
    return Status::Ok();
  });
}

}  // namespace osprey::ref
