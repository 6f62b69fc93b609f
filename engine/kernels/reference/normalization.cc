// Normalizations: BatchNormalization, InstanceNormalization, GroupNormalization,
// LayerNormalization, LRN, MeanVarianceNormalization, LpNormalization. Statistics are computed
// in double.
#include <cmath>

#include "kernels/reference/common.h"
#include "kernels/reference/reduction_util.h"

namespace osprey::ref {
namespace {

// Reads a float parameter input (scale, bias, mean, var) as doubles, checking its size.
Status read_param(const KernelContext& ctx, int i, const char* what, int64_t expected,
                  std::vector<double>* out) {
  if (!ctx.has_input(i)) return invalid_argument(what, " input is required");
  const Tensor& t = ctx.input(i);
  if (!dtype_is_float(t.dtype()))
    return invalid_argument(what, " must be a float tensor, got ", dtype_name(t.dtype()));
  if (t.numel() != expected)
    return invalid_argument(what, " has shape ", shape_to_string(t.shape()), ", expected ",
                            expected, " elements");
  out->resize(static_cast<size_t>(expected));
  OSPREY_RETURN_IF_ERROR(dispatch<FloatTypes>(t.dtype(), what, [&]<class T>() {
    const T* p = t.data<T>();
    for (int64_t k = 0; k < expected; ++k) (*out)[static_cast<size_t>(k)] = cast_to<double>(p[k]);
    return Status::Ok();
  }));
  return Status::Ok();
}

// Product of the dims after N and C.
int64_t spatial_size(const Shape& shape) {
  int64_t s = 1;
  for (size_t d = 2; d < shape.size(); ++d) s *= shape[d];
  return s;
}

// Mean and (biased) variance of n values, two passes in double.
template <class T>
void mean_var(const T* p, int64_t n, double* mean, double* var) {
  double m = 0, v = 0;
  for (int64_t k = 0; k < n; ++k) m += cast_to<double>(p[k]);
  m /= static_cast<double>(n);
  for (int64_t k = 0; k < n; ++k) {
    const double d = cast_to<double>(p[k]) - m;
    v += d * d;
  }
  *mean = m;
  *var = v / static_cast<double>(n);
}

// Allocates output i with dtype/shape and fills it from doubles.
Status write_output(KernelContext& ctx, int i, DType dtype, const Shape& shape,
                    const std::vector<double>& v) {
  if (!ctx.output_requested(i)) return Status::Ok();
  OSPREY_ASSIGN_OR_RETURN(Tensor t, ctx.new_output(i, dtype, shape));
  if (static_cast<size_t>(t.numel()) != v.size())
    return internal_error("output ", i, " size mismatch");
  return dispatch<FloatTypes>(dtype, "output", [&]<class T>() {
    T* p = t.data<T>();
    for (size_t k = 0; k < v.size(); ++k) p[k] = cast_to<T>(v[k]);
    return Status::Ok();
  });
}

// y[n, p, s] = x * a[p] + b[p] with p the channel (or feature) of the element.
// `param_of_s` is true when parameters vary with the spatial position (spatial=0).
template <class T>
void apply_affine(const T* x, T* y, int64_t n, int64_t c, int64_t s, const std::vector<double>& a,
                  const std::vector<double>& b, bool per_feature) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j) {
      const int64_t base = (i * c + j) * s;
      for (int64_t k = 0; k < s; ++k) {
        const size_t p = static_cast<size_t>(per_feature ? j * s + k : j);
        y[base + k] = cast_to<T>(cast_to<double>(x[base + k]) * a[p] + b[p]);
      }
    }
}

}  // namespace

Status batch_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t s = spatial_size(x.shape());
  const int opset = ctx.opset();
  const bool per_feature = opset < 9 && ctx.attr_int("spatial", 1) == 0;
  const int64_t p = per_feature ? c * s : c;
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  const double momentum = ctx.attr_float("momentum", 0.9f);
  bool training;
  if (opset >= 14) {
    training = ctx.attr_int("training_mode", 0) != 0;
    if (!training && (ctx.output_requested(1) || ctx.output_requested(2)))
      return invalid_argument("running_mean/running_var outputs need training_mode=1");
  } else {
    training = ctx.output_requested(1) || ctx.output_requested(2) || ctx.output_requested(3) ||
               ctx.output_requested(4);
    if (training && opset < 7 && ctx.attr_int("is_test", 0) != 0)
      return invalid_argument("training outputs were requested but is_test=1");
  }
  std::vector<double> scale, bias, mean, var;
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 1, "scale", p, &scale));
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 2, "B", p, &bias));
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 3, "input_mean", p, &mean));
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 4, "input_var", p, &var));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "BatchNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    std::vector<double> used_mean = mean, used_var = var;
    if (training) {
      // Batch statistics: over N and the spatial dims per channel (per feature: over N).
      std::vector<double> sum(static_cast<size_t>(p), 0.0), sq(static_cast<size_t>(p), 0.0);
      const double count = static_cast<double>(per_feature ? n : n * s);
      auto param = [&](int64_t j, int64_t k) { return static_cast<size_t>(per_feature ? j * s + k : j); };
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < c; ++j)
          for (int64_t k = 0; k < s; ++k) sum[param(j, k)] += cast_to<double>(in[(i * c + j) * s + k]);
      for (auto& v : sum) v /= count;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < c; ++j)
          for (int64_t k = 0; k < s; ++k) {
            const double d = cast_to<double>(in[(i * c + j) * s + k]) - sum[param(j, k)];
            sq[param(j, k)] += d * d;
          }
      for (auto& v : sq) v /= count;
      used_mean = sum;
      used_var = sq;
    }
    std::vector<double> a(static_cast<size_t>(p)), b(static_cast<size_t>(p));
    for (size_t k = 0; k < a.size(); ++k) {
      a[k] = scale[k] / std::sqrt(used_var[k] + eps);
      b[k] = bias[k] - a[k] * used_mean[k];
    }
    apply_affine<T>(in, y.data<T>(), n, c, s, a, b, per_feature);
    if (!training) return Status::Ok();
    std::vector<double> run_mean(a.size()), run_var(a.size());
    for (size_t k = 0; k < a.size(); ++k) {
      run_mean[k] = mean[k] * momentum + used_mean[k] * (1 - momentum);
      run_var[k] = var[k] * momentum + used_var[k] * (1 - momentum);
    }
    const Tensor& im = ctx.input(3);
    const Tensor& iv = ctx.input(4);
    OSPREY_RETURN_IF_ERROR(write_output(ctx, 1, im.dtype(), im.shape(), run_mean));
    OSPREY_RETURN_IF_ERROR(write_output(ctx, 2, iv.dtype(), iv.shape(), run_var));
    if (opset < 14) {
      OSPREY_RETURN_IF_ERROR(write_output(ctx, 3, im.dtype(), im.shape(), used_mean));
      OSPREY_RETURN_IF_ERROR(write_output(ctx, 4, iv.dtype(), iv.shape(), used_var));
    }
    return Status::Ok();
  });
}

Status instance_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t s = spatial_size(x.shape());
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  std::vector<double> scale, bias;
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 1, "scale", c, &scale));
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 2, "B", c, &bias));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "InstanceNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j) {
        const T* p = in + (i * c + j) * s;
        T* q = out + (i * c + j) * s;
        double mean = 0, var = 0;
        mean_var(p, s, &mean, &var);
        const double a = scale[static_cast<size_t>(j)] / std::sqrt(var + eps);
        const double b = bias[static_cast<size_t>(j)] - a * mean;
        for (int64_t k = 0; k < s; ++k) q[k] = cast_to<T>(cast_to<double>(p[k]) * a + b);
      }
    return Status::Ok();
  });
}

// GroupNormalization (opsets 18, 21): the channels of [N, C, ...] in num_groups groups, each
// group normalized over its channels and positions; scale and bias have one value per group at
// opset 18 and one per channel from opset 21.
Status group_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  const int64_t n = x.dim(0), c = x.dim(1), s = spatial_size(x.shape());
  if (!ctx.has_attr("num_groups")) return invalid_argument("attribute 'num_groups' is required");
  const int64_t groups = ctx.attr_int("num_groups", 0);
  if (groups <= 0 || c % groups != 0)
    return invalid_argument("num_groups ", groups, " must be positive and divide the ", c, " channels");
  const bool per_channel = ctx.opset() >= 21;
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  std::vector<double> scale, bias;
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 1, "scale", per_channel ? c : groups, &scale));
  OSPREY_RETURN_IF_ERROR(read_param(ctx, 2, "bias", per_channel ? c : groups, &bias));
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  const int64_t cg = c / groups, len = cg * s;
  return dispatch<FloatTypes>(x.dtype(), "GroupNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < n * groups; ++i) {
      const T* p = in + i * len;
      T* q = out + i * len;
      double mean = 0, var = 0;
      mean_var(p, len, &mean, &var);
      const double inv = 1.0 / std::sqrt(var + eps);
      const int64_t g = i % groups;
      for (int64_t ch = 0; ch < cg; ++ch) {
        const size_t at = static_cast<size_t>(per_channel ? g * cg + ch : g);
        const double a = scale[at] * inv, b = bias[at];
        for (int64_t k = 0; k < s; ++k)
          q[ch * s + k] = cast_to<T>((cast_to<double>(p[ch * s + k]) - mean) * a + b);
      }
    }
    return Status::Ok();
  });
}

// LpNormalization: x divided by its L1 or L2 norm along `axis` (default -1); a zero norm
// gives 0.
Status lp_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  const Tensor& x = ctx.input(0);
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", -1), x.rank(), &axis));
  const int64_t p = ctx.attr_int("p", 2);
  if (p != 1 && p != 2) return invalid_argument("p must be 1 or 2, got ", p);
  int64_t outer = 1, len = x.dim(axis), inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "LpNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        double norm = 0;
        for (int64_t k = 0; k < len; ++k) {
          const double v = cast_to<double>(in[base + k * inner]);
          norm += p == 1 ? std::fabs(v) : v * v;
        }
        if (p == 2) norm = std::sqrt(norm);
        for (int64_t k = 0; k < len; ++k)
          out[base + k * inner] = norm == 0 ? T(0) : cast_to<T>(cast_to<double>(in[base + k * inner]) / norm);
      }
    return Status::Ok();
  });
}

// Scale/B of LayerNormalization, broadcast to the normalized shape and read as doubles.
static Status layer_norm_param(const KernelContext& ctx, int i, const char* what,
                               const Shape& norm_shape, std::vector<double>* out) {
  const Tensor& t = ctx.input(i);
  if (!dtype_is_float(t.dtype()))
    return invalid_argument(what, " must be a float tensor, got ", dtype_name(t.dtype()));
  bool ok = t.rank() <= static_cast<int64_t>(norm_shape.size());
  for (int64_t d = 0; ok && d < t.rank(); ++d) {
    const int64_t nd = norm_shape[norm_shape.size() - static_cast<size_t>(t.rank() - d)];
    ok = t.dim(d) == nd || t.dim(d) == 1;
  }
  if (!ok)
    return invalid_argument(what, " of shape ", shape_to_string(t.shape()),
                            " does not broadcast to the normalized shape ",
                            shape_to_string(norm_shape));
  const int64_t m = shape_numel(norm_shape);
  out->resize(static_cast<size_t>(m));
  const auto st = broadcast_strides(t.shape(), norm_shape);
  return dispatch<FloatTypes>(t.dtype(), what, [&]<class T>() {
    const T* p = t.data<T>();
    StridedIter it(norm_shape, {st});
    for (int64_t k = 0; k < m; ++k, it.next())
      (*out)[static_cast<size_t>(k)] = cast_to<double>(p[it.offset(0)]);
    return Status::Ok();
  });
}

Status layer_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  if (!ctx.has_input(1)) return invalid_argument("Scale input is required");
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  int64_t axis = 0;
  OSPREY_RETURN_IF_ERROR(normalize_axis(ctx.attr_int("axis", -1), rank, &axis));
  const double eps = ctx.attr_float("epsilon", 1e-5f);
  const int64_t stash = ctx.attr_int("stash_type", 1);
  const DType stash_dtype = static_cast<DType>(stash);
  if (stash < 0 || stash > 64 || !dtype_is_float(stash_dtype))
    return invalid_argument("stash_type ", stash, " is not a float type");
  Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  Shape stat_shape(x.shape().begin(), x.shape().begin() + axis);
  stat_shape.resize(static_cast<size_t>(rank), 1);
  const int64_t m = shape_numel(norm_shape);
  const int64_t outer = shape_numel(stat_shape);
  std::vector<double> scale, bias;
  OSPREY_RETURN_IF_ERROR(layer_norm_param(ctx, 1, "Scale", norm_shape, &scale));
  if (ctx.has_input(2)) {
    OSPREY_RETURN_IF_ERROR(layer_norm_param(ctx, 2, "B", norm_shape, &bias));
  } else {
    bias.assign(static_cast<size_t>(m), 0.0);
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  std::vector<double> means(static_cast<size_t>(outer)), inv_std(static_cast<size_t>(outer));
  OSPREY_RETURN_IF_ERROR(dispatch<FloatTypes>(x.dtype(), "LayerNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t o = 0; o < outer; ++o) {
      const T* p = in + o * m;
      T* q = out + o * m;
      double mean = 0, var = 0;
      mean_var(p, m, &mean, &var);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t k = 0; k < m; ++k) {
        const size_t kk = static_cast<size_t>(k);
        q[k] = cast_to<T>((cast_to<double>(p[k]) - mean) * inv * scale[kk] + bias[kk]);
      }
      means[static_cast<size_t>(o)] = mean;
      inv_std[static_cast<size_t>(o)] = inv;
    }
    return Status::Ok();
  }));
  OSPREY_RETURN_IF_ERROR(write_output(ctx, 1, stash_dtype, stat_shape, means));
  return write_output(ctx, 2, stash_dtype, stat_shape, inv_std);
}

Status lrn(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  const Tensor& x = ctx.input(0);
  if (!ctx.has_attr("size")) return invalid_argument("attribute size is required");
  const int64_t size = ctx.attr_int("size", 1);
  if (size < 1) return invalid_argument("size must be positive, got ", size);
  const double alpha = ctx.attr_float("alpha", 1e-4f);
  const double beta = ctx.attr_float("beta", 0.75f);
  const double bias = ctx.attr_float("bias", 1.0f);
  const int64_t n = x.dim(0), c = x.dim(1);
  const int64_t s = spatial_size(x.shape());
  const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor and ceil of (size-1)/2
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  return dispatch<FloatTypes>(x.dtype(), "LRN", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < c; ++j) {
        const int64_t c0 = std::max<int64_t>(0, j - lo), c1 = std::min<int64_t>(c - 1, j + hi);
        for (int64_t k = 0; k < s; ++k) {
          double sq = 0;
          for (int64_t jj = c0; jj <= c1; ++jj) {
            const double v = cast_to<double>(in[(i * c + jj) * s + k]);
            sq += v * v;
          }
          const int64_t off = (i * c + j) * s + k;
          const double d = std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
          out[off] = cast_to<T>(cast_to<double>(in[off]) / d);
        }
      }
    return Status::Ok();
  });
}

Status mean_variance_normalization(KernelContext& ctx) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 1, 64));
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> axes = ctx.attr_ints("axes", {0, 2, 3});
  OSPREY_RETURN_IF_ERROR(normalize_axes(&axes, x.rank()));
  std::vector<bool> reduce(static_cast<size_t>(x.rank()), false);
  for (int64_t a : axes) reduce[static_cast<size_t>(a)] = true;
  const ReducePlan plan = make_reduce_plan(x.shape(), reduce);
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, x.dtype(), x.shape()));
  const double count = static_cast<double>(plan.inner.size());
  return dispatch<FloatTypes>(x.dtype(), "MeanVarianceNormalization", [&]<class T>() {
    const T* in = x.data<T>();
    T* out = y.data<T>();
    for (int64_t b : plan.base) {
      double mean = 0, var = 0;
      for (int64_t off : plan.inner) mean += cast_to<double>(in[b + off]);
      mean /= count;
      for (int64_t off : plan.inner) {
        const double d = cast_to<double>(in[b + off]) - mean;
        var += d * d;
      }
      var /= count;
      const double denom = std::sqrt(var) + 1e-9;
      for (int64_t off : plan.inner)
        out[b + off] = cast_to<T>((cast_to<double>(in[b + off]) - mean) / denom);
    }
    return Status::Ok();
  });
}

}  // namespace osprey::ref
