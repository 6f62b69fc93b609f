// Losses: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss.
//
// Both gather -logp[n, target[n, d], d] * weight[target] over (N, d1..dk), where targets
// equal to ignore_index contribute nothing (weight 0). "mean" divides the weighted sum by
// the sum of the gathered weights (the count of non-ignored targets when unweighted).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "kernels/reference/common.h"

namespace osprey::ref {
namespace {

struct LossSetup {
  int64_t n = 0, c = 0, d = 0;  // input viewed as [N, C, D]
  std::vector<int64_t> target;  // [N * D]
  std::vector<double> weight;   // [C], empty = all ones
  std::optional<int64_t> ignore;
  std::string reduction;
};

// Validates input 0 (scores / log-probabilities), target (input 1), weight (input 2).
Status loss_setup(const KernelContext& ctx, LossSetup* s) {
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 0, 2, 64));
  OSPREY_RETURN_IF_ERROR(require_rank(ctx, 1, 1, 63));
  const Tensor& x = ctx.input(0);
  const Tensor& t = ctx.input(1);
  if (t.dtype() != DType::kInt64 && t.dtype() != DType::kInt32)
    return invalid_argument("target must be int32 or int64, got ", dtype_name(t.dtype()));
  bool shapes_ok = t.rank() == x.rank() - 1 && t.dim(0) == x.dim(0);
  for (int64_t k = 2; shapes_ok && k < x.rank(); ++k) shapes_ok = t.dim(k - 1) == x.dim(k);
  if (!shapes_ok)
    return invalid_argument("target shape ", shape_to_string(t.shape()),
                            " does not match input shape ", shape_to_string(x.shape()),
                            " (expected the input shape without dim 1)");
  s->n = x.dim(0);
  s->c = x.dim(1);
  s->d = 1;
  for (int64_t k = 2; k < x.rank(); ++k) s->d *= x.dim(k);
  s->reduction = ctx.attr_string("reduction", "mean");
  if (s->reduction != "none" && s->reduction != "sum" && s->reduction != "mean")
    return invalid_argument("reduction must be none, sum or mean, got '", s->reduction, "'");
  if (ctx.has_attr("ignore_index")) s->ignore = ctx.attr_int("ignore_index", 0);
  s->target = t.to_int64_vector();
  for (int64_t v : s->target) {
    if (s->ignore && v == *s->ignore) continue;
    if (v < 0 || v >= s->c)
      return invalid_argument("target value ", v, " is out of range [0, ", s->c, ")");
  }
  s->weight.clear();
  if (ctx.has_input(2)) {
    const Tensor& w = ctx.input(2);
    if (w.rank() != 1 || w.dim(0) != s->c)
      return invalid_argument("weight must have shape [", s->c, "], got ",
                              shape_to_string(w.shape()));
    if (!dtype_is_float(w.dtype()))
      return invalid_argument("weight must be a float tensor, got ", dtype_name(w.dtype()));
    s->weight.resize(static_cast<size_t>(s->c));
    for (int64_t k = 0; k < s->c; ++k) s->weight[static_cast<size_t>(k)] = w.get_as_double(k);
  }
  return Status::Ok();
}

// Gathers the weighted negative log-probabilities and writes output 0.
template <class T>
Status loss_output(KernelContext& ctx, const LossSetup& s, DType out_dtype, const T* logp) {
  const size_t count = static_cast<size_t>(s.n * s.d);
  std::vector<double> loss(count, 0.0);
  double loss_sum = 0, weight_sum = 0;
  for (int64_t i = 0; i < s.n; ++i)
    for (int64_t j = 0; j < s.d; ++j) {
      const size_t k = static_cast<size_t>(i * s.d + j);
      const int64_t t = s.target[k];
      if (s.ignore && t == *s.ignore) continue;
      const double w = s.weight.empty() ? 1.0 : s.weight[static_cast<size_t>(t)];
      loss[k] = -cast_to<double>(logp[(i * s.c + t) * s.d + j]) * w;
      loss_sum += loss[k];
      weight_sum += w;
    }
  Shape shape;
  if (s.reduction == "none") {
    shape = ctx.input(1).shape();
  } else if (s.reduction == "sum") {
    loss = {loss_sum};
  } else {
    loss = {weight_sum == 0 ? std::numeric_limits<double>::quiet_NaN() : loss_sum / weight_sum};
  }
  OSPREY_ASSIGN_OR_RETURN(Tensor y, ctx.new_output(0, out_dtype, shape));
  return dispatch<FloatTypes>(out_dtype, "loss", [&]<class U>() {
    U* out = y.data<U>();
    for (size_t k = 0; k < loss.size(); ++k) out[k] = cast_to<U>(loss[k]);
    return Status::Ok();
  });
}

}  // namespace

Status negative_log_likelihood_loss(KernelContext& ctx) {
  LossSetup s;
  OSPREY_RETURN_IF_ERROR(loss_setup(ctx, &s));
  const Tensor& x = ctx.input(0);
  return dispatch<FloatTypes>(x.dtype(), "NegativeLogLikelihoodLoss", [&]<class T>() {
    return loss_output<T>(ctx, s, x.dtype(), x.data<T>());
  });
}

Status softmax_cross_entropy_loss(KernelContext& ctx) {
  LossSetup s;
  OSPREY_RETURN_IF_ERROR(loss_setup(ctx, &s));
  const Tensor& x = ctx.input(0);
  // log_softmax over axis 1, in double.
  std::vector<double> logp(static_cast<size_t>(x.numel()));
  OSPREY_RETURN_IF_ERROR(dispatch<FloatTypes>(x.dtype(), "SoftmaxCrossEntropyLoss", [&]<class T>() {
    const T* in = x.data<T>();
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0; j < s.d; ++j) {
        const int64_t base = i * s.c * s.d + j;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < s.c; ++k) m = std::max(m, cast_to<double>(in[base + k * s.d]));
        if (std::isinf(m)) m = 0;
        double sum = 0;
        for (int64_t k = 0; k < s.c; ++k) sum += std::exp(cast_to<double>(in[base + k * s.d]) - m);
        const double ls = std::log(sum);
        for (int64_t k = 0; k < s.c; ++k)
          logp[static_cast<size_t>(base + k * s.d)] = cast_to<double>(in[base + k * s.d]) - m - ls;
      }
    return Status::Ok();
  }));
  if (ctx.output_requested(1)) {
    OSPREY_ASSIGN_OR_RETURN(Tensor lp, ctx.new_output(1, x.dtype(), x.shape()));
    OSPREY_RETURN_IF_ERROR(dispatch<FloatTypes>(x.dtype(), "log_prob", [&]<class T>() {
      T* out = lp.data<T>();
      for (size_t k = 0; k < logp.size(); ++k) out[k] = cast_to<T>(logp[k]);
      return Status::Ok();
    }));
  }
  return loss_output<double>(ctx, s, x.dtype(), logp.data());
}

}  // namespace osprey::ref
